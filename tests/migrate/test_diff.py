"""`alterflow migrate diff --to FILE` (docs/migrations.md): desired CREATE TABLEs to the next migration file.

Every test runs on a real catalog, SQLite and PostgreSQL (`catalog_session`). Changes that are
light are applied with `MigrationApply` and diffed again, so "the file takes the catalog there" is
checked by the catalog itself (no difference afterwards), not by reading our own output back.
Nothing here starts Spark: heavy statements are planned and written, never applied."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from alterflow.migrate.apply import MigrationApply
from alterflow.migrate.diff import DiffError, diff_schema, write_diff
from alterflow.migrate.migration_files import read_directory

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"


@pytest.fixture
def session(catalog_session):
    return catalog_session


@pytest.fixture
def migrations(tmp_path):
    return tmp_path / "migrations"


def desired(tmp_path: pathlib.Path, text: str, name: str = "desired.sql") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(session, text: str) -> None:
    list(session.run(text))  # every statement run, in order


def apply(session, migrations: pathlib.Path) -> None:
    MigrationApply(session, migrations, on_line=lambda _line: None).run()


def files(migrations: pathlib.Path) -> list[str]:
    return sorted(p.name for p in migrations.iterdir()) if migrations.exists() else []


def statements(migrations: pathlib.Path, script: str) -> list[str]:
    """The statements of a written migration file, as apply reads them."""
    (file,) = [f for f in read_directory(migrations) if f.script == script]
    return [s.text for s in file.statements]


def columns(session, table: str) -> list[tuple[int, str, str, bool]]:
    _info, version = session.catalog.current_schema(table)
    return [(c.id, c.name, c.type.sql(), c.nullable) for c in version.columns]


# ------------------------------------------------------------------------------------------------
# What it writes
# ------------------------------------------------------------------------------------------------


def test_new_table_is_its_create_table_as_written_and_other_tables_are_left_alone(session, migrations, tmp_path):
    run(session, "CREATE TABLE keep (x INT)")
    create = (
        "CREATE TABLE orders (\n"
        "    id BIGINT NOT NULL,  -- the order\n"
        "    amount DECIMAL(10,2) DEFAULT 0.00,\n"
        "    PRIMARY KEY (id)\n"
        ") DISTRIBUTED BY HASH(id) BUCKETS 2 ORDER BY (id)"
    )
    path = desired(tmp_path, create + ";\n")

    out = write_diff(session, migrations, path)

    assert files(migrations) == ["V1__diff_to_desired.sql"]
    assert statements(migrations, "V1__diff_to_desired.sql") == [create]
    lines = out.splitlines()
    assert lines[0].startswith("V1__diff_to_desired.sql:5  CREATE TABLE orders ( id BIGINT NOT NULL,")
    assert lines[1] == "  LIGHT    new table orders (2 columns): metadata only"
    assert "note: 1 table(s) not in desired.sql are left alone (diff never drops a table): keep" in lines
    assert lines[-1] == f"wrote {migrations / 'V1__diff_to_desired.sql'}: 1 statement(s)"

    apply(session, migrations)
    assert columns(session, "orders") == [(1, "id", "BIGINT", False), (2, "amount", "DECIMAL(10,2)", True)]
    assert session.catalog.current_schema("keep")[1].version == 1  # left alone
    again = write_diff(session, migrations, path)
    assert again.splitlines()[-1] == "no difference: the catalog matches desired.sql; nothing written"
    assert files(migrations) == ["V1__diff_to_desired.sql"]


def test_add_drop_modify_and_defaults_in_one_guarded_alter_then_no_difference(session, migrations, tmp_path):
    run(
        session,
        "CREATE TABLE t (id BIGINT NOT NULL, qty INT, note VARCHAR(8) DEFAULT 'x', flag INT DEFAULT 1, "
        "mode STRING DEFAULT 'a', gone STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;"
        "INSERT INTO t (id, qty, note) VALUES (1, 5, 'n')",
    )
    path = desired(
        tmp_path,
        "CREATE TABLE t (\n"
        "    id BIGINT NOT NULL,\n"
        "    qty BIGINT COMMENT 'pieces',\n"
        "    note VARCHAR(20) DEFAULT 'y',\n"
        "    flag INT DEFAULT 2,\n"
        "    mode STRING,\n"
        "    added DATE,\n"
        "    PRIMARY KEY (id)\n"
        ") DISTRIBUTED BY HASH(id) BUCKETS 2;\n",
    )

    out = write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        "ALTER TABLE t\n"
        "    MODIFY COLUMN qty BIGINT COMMENT 'pieces',\n"
        "    MODIFY COLUMN note VARCHAR(20) DEFAULT 'y',\n"
        "    ALTER COLUMN flag SET DEFAULT 2,\n"
        "    ALTER COLUMN mode DROP DEFAULT,\n"
        "    ADD COLUMN added DATE,\n"
        "    DROP COLUMN gone\n"
        '    PROPERTIES ("expected_version" = "1")'
    ]
    assert out.splitlines()[1].startswith(
        "  LIGHT    MODIFY COLUMN qty BIGINT COMMENT 'pieces': metadata only: lossless widening INT -> BIGINT"
    )
    assert "DROP COLUMN gone: metadata only: drops column id 6 (gone)" in out

    apply(session, migrations)
    _info, version = session.catalog.current_schema("t")
    by_name = {c.name: c for c in version.columns}
    assert [c.name for c in version.columns] == ["id", "qty", "note", "flag", "mode", "added"]
    assert (by_name["qty"].type.sql(), by_name["qty"].comment) == ("BIGINT", "pieces")
    assert (by_name["note"].write_default, by_name["flag"].write_default, by_name["mode"].write_default) == ("y", 2, None)
    assert write_diff(session, migrations, path).splitlines()[-1] == "no difference: the catalog matches desired.sql; nothing written"


def test_a_heavy_change_is_planned_heavy_and_written(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, '7'), (2, NULL)")
    path = desired(tmp_path, "CREATE TABLE t (id INT NOT NULL, v INT NOT NULL DEFAULT 0, PRIMARY KEY (id)) ORDER BY (id);")

    out = write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        'ALTER TABLE t\n    MODIFY COLUMN v INT NOT NULL DEFAULT 0,\n    ORDER BY (id)\n    PROPERTIES ("expected_version" = "1")'
    ]
    plan = out.splitlines()[1]
    assert plan.startswith(
        "  HEAVY    MODIFY COLUMN v INT NOT NULL DEFAULT 0: STRING -> INT can fail and needs a rewrite; NULL -> NOT NULL"
    )
    assert plan.endswith("ORDER BY (id): rewrite: the data is sorted by (id); 2 rows today")


def test_rename_marked_on_the_column_line_keeps_the_column_and_its_values(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, amt INT, PRIMARY KEY (id)); INSERT INTO t VALUES (1, 10)")
    path = desired(
        tmp_path, "CREATE TABLE t (\n    id INT NOT NULL,\n    amount INT,  -- Renamed from amt (2024 cleanup)\n    PRIMARY KEY (id)\n);"
    )

    write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        'ALTER TABLE t\n    RENAME COLUMN amt TO amount\n    PROPERTIES ("expected_version" = "1")'
    ]
    apply(session, migrations)
    assert columns(session, "t") == [(1, "id", "INT", False), (2, "amount", "INT", True)]  # id 2: the same column
    out = write_diff(session, migrations, path)  # the mark stays in FILE: the rename is done
    assert "note: t.amount: `-- renamed from amt` is already done (the table has amount, not amt); the mark can go" in out
    assert out.splitlines()[-1] == "no difference: the catalog matches desired.sql; nothing written"


def test_without_the_mark_a_rename_is_a_drop_and_an_add(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, amt INT, PRIMARY KEY (id))")
    path = desired(tmp_path, "CREATE TABLE t (id INT NOT NULL, amount INT, PRIMARY KEY (id)); -- renamed from amt, but not on its line")

    with pytest.raises(DiffError, match=r"desired\.sql:1: `-- renamed from amt` is not on a column definition's line"):
        write_diff(session, migrations, path)
    path = desired(tmp_path, "CREATE TABLE t (id INT NOT NULL, amount INT, PRIMARY KEY (id)) -- amount was amt\n;")

    out = write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        'ALTER TABLE t\n    ADD COLUMN amount INT,\n    DROP COLUMN amt\n    PROPERTIES ("expected_version" = "1")'
    ]
    assert "drops column id 2 (amt)" in out
    apply(session, migrations)
    assert columns(session, "t") == [(1, "id", "INT", False), (3, "amount", "INT", True)]  # a new column, id 3


def test_renames_run_in_an_order_that_frees_each_name_and_a_mark_on_a_wrapped_definition(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, a INT, b STRING, PRIMARY KEY (id))")
    path = desired(
        tmp_path,
        "CREATE TABLE t (\n"
        "    id INT NOT NULL,\n"
        "    b INT /* the old a */ ,  -- renamed from `a`\n"
        "    c STRING\n"
        "        COMMENT 'was b -- renamed from nothing'  -- renamed from b\n"
        "    , a INT,\n"
        "    PRIMARY KEY (id)\n"
        ");",
    )

    write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        "ALTER TABLE t\n"
        "    RENAME COLUMN b TO c,\n"
        "    RENAME COLUMN a TO b,\n"
        "    MODIFY COLUMN c STRING COMMENT 'was b -- renamed from nothing',\n"
        "    ADD COLUMN a INT\n"
        '    PROPERTIES ("expected_version" = "1")'
    ]
    apply(session, migrations)
    assert columns(session, "t") == [(1, "id", "INT", False), (2, "b", "INT", True), (3, "c", "STRING", True), (4, "a", "INT", True)]


def test_column_order_is_restored_with_the_fewest_moves(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, a INT, b INT, c INT, PRIMARY KEY (id))")
    path = desired(tmp_path, "CREATE TABLE t (id INT NOT NULL, c INT, a INT, x INT, b INT, PRIMARY KEY (id))")

    out = write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        'ALTER TABLE t\n    MODIFY COLUMN c INT AFTER id,\n    ADD COLUMN x INT AFTER a\n    PROPERTIES ("expected_version" = "1")'
    ]
    assert "metadata only: moved after id" in out
    apply(session, migrations)
    assert [c[1] for c in columns(session, "t")] == ["id", "c", "a", "x", "b"]
    assert write_diff(session, migrations, path).splitlines()[-1] == "no difference: the catalog matches desired.sql; nothing written"


def test_no_difference_writes_nothing(session, migrations, tmp_path):
    create = "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR(8) DEFAULT 'a' COMMENT 'c', PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3 ORDER BY (id)"
    run(session, create)
    path = desired(tmp_path, create.replace("BIGINT", "bigint") + ";\n")

    out = write_diff(session, migrations, path)

    assert out == "no difference: the catalog matches desired.sql; nothing written"
    assert not migrations.exists()


def test_the_diff_is_relative_to_the_pending_migrations(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); CREATE TABLE gone (x INT)")
    migrations.mkdir()
    (migrations / "V1__add_x.sql").write_text("ALTER TABLE t ADD COLUMN x INT;\n")
    (migrations / "V2__create_u.sql").write_text("CREATE TABLE u (a INT);\nDROP TABLE gone;\n")
    path = desired(
        tmp_path,
        "CREATE TABLE t (id INT NOT NULL, x INT, y INT, PRIMARY KEY (id));\nCREATE TABLE u (a INT, b INT);\nCREATE TABLE gone (x INT, z INT);\n",
    )

    out = write_diff(session, migrations, path)

    assert files(migrations) == ["V1__add_x.sql", "V2__create_u.sql", "V3__diff_to_desired.sql"]
    assert statements(migrations, "V3__diff_to_desired.sql") == [
        'ALTER TABLE t\n    ADD COLUMN y INT\n    PROPERTIES ("expected_version" = "2")',
        'ALTER TABLE u\n    ADD COLUMN b INT\n    PROPERTIES ("expected_version" = "1")',
        "CREATE TABLE gone (x INT, z INT)",
    ]
    assert out.splitlines()[0] == "relative to the catalog after 2 pending migration file(s): V1__add_x.sql, V2__create_u.sql"
    assert "note:" not in out  # every table of the catalog after V1, V2 is in FILE

    apply(session, migrations)
    assert [c[1] for c in columns(session, "gone")] == ["x", "z"]
    assert write_diff(session, migrations, path).splitlines()[-1] == "no difference: the catalog matches desired.sql; nothing written"


def test_rejected_changes_are_reported_and_the_others_written(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, d DATE, v INT, PRIMARY KEY (id)) ORDER BY (v)")
    path = desired(tmp_path, "CREATE TABLE t (k INT NOT NULL, d INT, v INT, w INT, PRIMARY KEY (k)) ORDER BY (v)")

    out = write_diff(session, migrations, path)

    assert statements(migrations, "V1__diff_to_desired.sql") == [
        'ALTER TABLE t\n    ADD COLUMN w INT\n    PROPERTIES ("expected_version" = "1")'
    ]
    lines = out.splitlines()
    assert lines[:10] == [
        "not written  ALTER TABLE t: PRIMARY KEY (id) -> (k)",
        "  REJECTED ALTER TABLE t: ALTER TABLE cannot change a primary key: create a new table and copy the rows (INSERT INTO ... SELECT)",
        "not written  ALTER TABLE t ADD COLUMN k INT NOT NULL FIRST",
        "  REJECTED ALTER TABLE t: cannot add column k: a NOT NULL column needs a DEFAULT for the rows that already exist",
        "not written  ALTER TABLE t MODIFY COLUMN d INT",
        "  REJECTED ALTER TABLE t: cannot change the type of column d: DATE -> INT is not a supported type change",
        "not written  ALTER TABLE t DISTRIBUTED BY HASH(k) BUCKETS 1",  # k: the desired primary key, by default the distribution
        "  REJECTED ALTER TABLE t: unknown column k",
        "not written  ALTER TABLE t DROP COLUMN id",
        "  REJECTED ALTER TABLE t: cannot drop column id: it is a primary-key column",
    ]
    assert lines[10:12] == [
        'V1__diff_to_desired.sql:5  ALTER TABLE t ADD COLUMN w INT PROPERTIES ("expected_version" = "1")',
        "  LIGHT    ADD COLUMN w INT: metadata only: adds column id 4 (w), NULL for existing rows",
    ]
    assert lines[-1] == f"wrote {migrations / 'V1__diff_to_desired.sql'}: 1 statement(s); 5 rejected statement(s) not written"


def test_nothing_written_when_every_change_is_rejected(session, migrations, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id)) ORDER BY (v)")
    path = desired(tmp_path, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id))")

    out = write_diff(session, migrations, path)

    assert out.splitlines() == [
        "not written  ALTER TABLE t: ORDER BY (v) -> none",
        "  REJECTED ALTER TABLE t: ALTER TABLE cannot remove a sort key (ORDER BY needs a column); add ORDER BY to the desired CREATE TABLE",
        "nothing written: all 1 statement(s) were rejected",
    ]
    assert not migrations.exists()


# ------------------------------------------------------------------------------------------------
# Bad input: one line, nothing written
# ------------------------------------------------------------------------------------------------

BAD = [
    ("missing", None, r"desired schema file .*nowhere\.sql does not exist"),
    ("not_utf8", b"CREATE TABLE t (id INT);\n-- caf\xe9\n", r"desired\.sql is not UTF-8 text: byte 0xe9 at offset 31"),
    ("empty", b"-- nothing yet\n", r"desired\.sql holds no statement"),
    ("parser", b"CREATE TABLE t (id INT);\n\nCREATE TABLE u (id INTT);\n", r"desired\.sql:3: unknown type INTT for column id"),
    (
        "unterminated",
        b"CREATE TABLE t (id INT COMMENT 'open);\n",
        r"desired\.sql: unterminated string, quoted name or comment at line 1, column 32",
    ),
    ("not_create", b"CREATE TABLE t (id INT);\nALTER TABLE t ADD COLUMN x INT;\n", r"desired\.sql:2: ALTER TABLE is not CREATE TABLE"),
    (
        "twice",
        b"CREATE TABLE t (id INT);\nCREATE TABLE T (id INT, x INT);\n",
        r"desired\.sql:2: table T is created twice \(first at line 1\)",
    ),
    (
        "invalid",
        b"CREATE TABLE t (id INT, PRIMARY KEY (nope));\n",
        r"desired\.sql:1: CREATE TABLE t: unknown column nope in the primary key",
    ),
    (
        "unknown_old",
        b"CREATE TABLE t (id INT NOT NULL,\n  w INT -- renamed from nope\n, PRIMARY KEY (id));\n",
        r"desired\.sql:2: .*table t has no column nope",
    ),
    (
        "both",
        b"CREATE TABLE t (id INT NOT NULL, v INT -- renamed from u\n, PRIMARY KEY (id));\n",
        r"desired\.sql:1: .*table t has both u and v",
    ),
    ("itself", b"CREATE TABLE t (id INT NOT NULL, v INT -- renamed from V\n, PRIMARY KEY (id));\n", r"names column v itself"),
    (
        "same_old",
        b"CREATE TABLE t (id INT NOT NULL,\n a INT, -- renamed from u\n b INT -- renamed from u\n, PRIMARY KEY (id));\n",
        r"desired\.sql:3: columns a \(line 2\) and b are both `-- renamed from u`",
    ),
    ("no_name", b"CREATE TABLE t (id INT NOT NULL, v INT -- renamed from\n, PRIMARY KEY (id));\n", r"needs the column's old name"),
    (
        "new_table",
        b"CREATE TABLE fresh (a INT -- renamed from b\n);\n",
        r"desired\.sql:1: `-- renamed from b`: table fresh does not exist yet",
    ),
    (
        "cycle",
        b"CREATE TABLE t (id INT NOT NULL,\n v INT, -- renamed from u\n u INT -- renamed from v\n, PRIMARY KEY (id));\n",
        r"desired\.sql:2: the renames of table t form a cycle \(u -> v, v -> u\)",
    ),
]


@pytest.mark.parametrize("case,content,message", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_one_line_and_writes_nothing(session, migrations, tmp_path, case, content, message):
    run(session, "CREATE TABLE t (id INT NOT NULL, u INT, v INT, PRIMARY KEY (id))")
    migrations.mkdir()
    (migrations / "V1__pending.sql").write_text("ALTER TABLE t ADD COLUMN p INT;\n")
    path = tmp_path / ("nowhere.sql" if content is None else "desired.sql")
    if content is not None:
        path.write_bytes(content)

    with pytest.raises(DiffError, match=message) as raised:
        write_diff(session, migrations, path)

    assert "\n" not in str(raised.value)
    assert files(migrations) == ["V1__pending.sql"]


def test_desired_file_inside_the_migrations_directory_is_refused(session, migrations, tmp_path):
    migrations.mkdir()
    path = desired(migrations, "CREATE TABLE t (id INT);")
    with pytest.raises(DiffError, match=r"is in the migrations directory, where every \.sql file is a migration"):
        diff_schema(session.catalog, migrations, path)


# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------


def test_cli_writes_the_file_prints_the_plan_and_refuses_bad_input_in_one_line(session, settings, catalog_url, tmp_path):
    run(session, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id))")
    # written with a byte-order mark, as editors on Windows do: it is not part of the text
    (tmp_path / "desired.sql").write_text("CREATE TABLE t (id INT NOT NULL, v BIGINT, PRIMARY KEY (id));\n", encoding="utf-8-sig")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(settings.home), ALTERFLOW_CATALOG_URL=catalog_url, ALTERFLOW_MIGRATIONS="db/migrations")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ALTERFLOW), "migrate", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    done = cli("diff", "--to", "desired.sql")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'V1__diff_to_desired.sql:5  ALTER TABLE t MODIFY COLUMN v BIGINT PROPERTIES ("expected_version" = "1")',
        "  LIGHT    MODIFY COLUMN v BIGINT: metadata only: lossless widening INT -> BIGINT (a cast when reading)",
        "wrote db/migrations/V1__diff_to_desired.sql: 1 statement(s)",
    ]
    assert (
        (tmp_path / "db/migrations/V1__diff_to_desired.sql")
        .read_text()
        .endswith('ALTER TABLE t\n    MODIFY COLUMN v BIGINT\n    PROPERTIES ("expected_version" = "1");\n')
    )
    lint = cli("lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr

    (tmp_path / "desired.sql").write_text("CREATE TABLE t (id INT NOT NULL, v BIGINT, PRIMARY KEY (id));\nDROP TABLE t;\n")
    refused = cli("diff", "--to", "desired.sql")
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert (
        refused.stderr
        == "error: desired.sql:2: DROP TABLE is not CREATE TABLE; the desired schema file holds CREATE TABLE statements only\n"
    )
    assert sorted(p.name for p in (tmp_path / "db/migrations").iterdir()) == ["V1__diff_to_desired.sql", "alterflow.sum"]


# ------------------------------------------------------------------------------------------------
# The clauses of one table, against the planner, for many shapes (no catalog: pure functions)
# ------------------------------------------------------------------------------------------------


@given(st.data())
@hypothesis_settings(max_examples=150, deadline=None)
def test_any_reorder_add_drop_rename_plans_to_exactly_the_desired_columns(tmp_path_factory, data):
    from alterflow import sql as ast
    from alterflow.migrate.diff import read_desired, table_changes
    from alterflow.planner import TableContext, plan_alter, plan_create_table

    today = data.draw(st.lists(st.sampled_from([f"a{i}" for i in range(8)]), min_size=1, max_size=8, unique=True))
    fate = {name: data.draw(st.sampled_from(["keep", "rename", "drop"])) for name in today}
    renamed = {name: f"b{i}" for i, name in enumerate(today) if fate[name] == "rename"}
    added = [f"c{i}" for i in range(data.draw(st.integers(0, 3)))]
    wanted = [renamed.get(n, n) for n in today if fate[n] != "drop"] + added
    if not wanted:
        wanted = ["c9"]
    wanted = data.draw(st.permutations(wanted))
    current, _next = plan_create_table(ast.parse_statements(f"CREATE TABLE t ({', '.join(f'{n} INT' for n in today)})")[0], 7)
    old_of = {new: old for old, new in renamed.items()}
    marks = [f"  -- renamed from {old_of[n]}" if n in old_of else "" for n in wanted]
    body = [f"    {n} INT" + ("," if i < len(wanted) - 1 else "") + marks[i] for i, n in enumerate(wanted)]
    path = tmp_path_factory.mktemp("d") / "desired.sql"
    path.write_text("CREATE TABLE t (\n" + "\n".join(body) + "\n);\n")
    (want,) = read_desired(path)

    changes = table_changes("desired.sql", "t", current, want)

    assert not changes.unsupported
    if not changes.clauses:
        assert [c.name for c in current.columns] == wanted
        return
    plan = plan_alter(TableContext("t", current, len(today) + 1), ast.parse_statements("ALTER TABLE t " + ", ".join(changes.clauses))[0])
    assert not plan.rejected, plan.rejection
    assert [c.name for c in plan.new.columns] == wanted
    ids_today = {c.name: c.id for c in current.columns}
    for column in plan.new.columns:  # kept and renamed columns keep their id: their data stays
        old = old_of.get(column.name, column.name)
        if fate.get(old) in ("keep", "rename"):
            assert column.id == ids_today[old]
    moves = sum(1 for c in changes.clauses if c.startswith("MODIFY COLUMN"))
    kept = [n for n in wanted if old_of.get(n, n) in ids_today and fate[old_of.get(n, n)] != "drop"]
    order_today = [renamed.get(n, n) for n in today if fate[n] != "drop"]
    assert moves == len(kept) - _longest_common_order(order_today, kept)


def _longest_common_order(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of two orders of the same names."""
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            best[i + 1][j + 1] = best[i][j] + 1 if x == y else max(best[i][j + 1], best[i + 1][j])
    return best[-1][-1]
