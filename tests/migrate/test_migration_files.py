"""The migrations directory: names, version order, checksums, statements and their lines."""

from __future__ import annotations

import pytest

from alterflow.migrate.migration_files import (
    MigrationFileError,
    checksum,
    new_file,
    parse_name,
    read_directory,
    statement_hash,
    version_key,
)


def test_versions_compare_as_numbers_dotted_allowed():
    assert version_key("1.10") > version_key("1.9") > version_key("1.2") > version_key("1")
    assert version_key("10") > version_key("9")
    assert version_key("2.0") == version_key("2")


def test_names_parse_to_version_and_description():
    assert parse_name("V3__widen_amount.sql") == ("3", "widen amount")
    assert parse_name("V1.2.3__x.sql") == ("1.2.3", "x")
    # Flyway's rules: `_` between version parts, spaces in the description, no description at all
    assert parse_name("V1_1__x.sql") == ("1.1", "x")
    assert parse_name("V2__add order channel.sql") == ("2", "add order channel")
    assert parse_name("V3.sql") == parse_name("V3__.sql") == ("3", "")
    assert parse_name("V4__a__b.sql") == ("4", "a  b")  # the description starts after the first `__`
    assert version_key("1_10") == version_key("1.10") > version_key("1_9")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("V3_x.sql", "V<version>__<description>.sql"),
        ("V__x.sql", "V<version>__<description>.sql"),
        ("Vx__y.sql", "V<version>__<description>.sql"),
        ("V3.__x.sql", "V<version>__<description>.sql"),
        ("V3__a\tb.sql", "V<version>__<description>.sql"),
        ("v3__x.sql", "the prefix must be an upper-case V"),
        ("U3__x.sql", "ALTER TABLE t REVERT TO VERSION n"),
        ("R3__x.sql", "a repeatable migration has no version"),
    ],
)
def test_a_name_that_does_not_parse_is_one_line(name, expected):
    with pytest.raises(MigrationFileError) as info:
        parse_name(name)
    assert "\n" not in str(info.value) and expected in str(info.value)


def test_directory_in_version_order_with_gaps_and_other_files_ignored(migrations):
    migrations.write("V10__c.sql", "DROP TABLE IF EXISTS c;")
    migrations.write("V2__b.sql", "DROP TABLE IF EXISTS b;")
    migrations.write("V1.5__a.sql", "DROP TABLE IF EXISTS a;")
    migrations.write("README.md", "not a migration")
    migrations.write(".V9__hidden.sql", "x")
    assert [f.script for f in read_directory(migrations.path)] == ["V1.5__a.sql", "V2__b.sql", "V10__c.sql"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"V1__a.sql": "DROP TABLE IF EXISTS a;", "V1.0__b.sql": "DROP TABLE IF EXISTS b;"}, "have the same version"),
        ({"V1__a.sql": "-- nothing here\n"}, "V1__a.sql holds no statement"),
        ({"V1__a.sql": ""}, "V1__a.sql holds no statement"),
        ({"Vone__a.sql": "DROP TABLE IF EXISTS a;"}, "not a migration file name"),
        ({"V1__a.sql": "SELECT 'unterminated"}, "V1__a.sql: "),
    ],
)
def test_bad_directories_are_one_line(migrations, files, expected):
    for name, text in files.items():
        migrations.write(name, text)
    with pytest.raises(MigrationFileError) as info:
        read_directory(migrations.path)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_not_utf8_and_missing_directory(migrations, tmp_path):
    (migrations.path / "V1__a.sql").write_bytes(b"DROP TABLE \xff;")
    with pytest.raises(MigrationFileError, match="not UTF-8 text: byte 0xff"):
        read_directory(migrations.path)
    with pytest.raises(MigrationFileError, match="does not exist"):
        read_directory(tmp_path / "nowhere")


def test_statements_carry_their_lines(migrations):
    migrations.write("V1__a.sql", "-- header\n\nCREATE TABLE t (a INT);\nALTER TABLE t\n  ADD COLUMN b INT;\n\n\nDROP TABLE t;")
    (file,) = read_directory(migrations.path)
    assert [(s.position, s.line) for s in file.statements] == [(1, 3), (2, 4), (3, 8)]
    assert file.statements[1].text == "ALTER TABLE t\n  ADD COLUMN b INT"


def test_checksum_ignores_line_ends_and_statement_hash_ignores_spacing():
    assert checksum("a;\r\nb;") == checksum("a;\nb;") != checksum("a;\nc;")
    assert statement_hash("ALTER TABLE t  ADD COLUMN b INT;") == statement_hash("ALTER TABLE t\nADD COLUMN b INT")


def test_new_creates_the_next_version_empty_and_never_overwrites(migrations):
    migrations.write("V6.2__x.sql", "DROP TABLE IF EXISTS x;")
    path = new_file(migrations.path, "Add region, to orders!")
    assert path.name == "V7__Add_region_to_orders.sql" and path.read_text() == ""
    with pytest.raises(MigrationFileError, match="no letter or digit"):
        new_file(migrations.path, "!!!")


def test_new_in_a_missing_directory_starts_at_1(tmp_path):
    assert new_file(tmp_path / "fresh", "first").name == "V1__first.sql"
