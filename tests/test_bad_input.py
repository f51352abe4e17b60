"""Bad input (docs/semantics.md: rejected changes, "Bad input"): every rejected statement gets ONE line that names the
table, the column (where there is one) and the rule, and changes NOTHING: schema versions, jobs,
DESCRIBE, the visible files of every table, the views and the files under the warehouse are the same
before and after."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime

import pytest
from sqlalchemy import select

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.models import AlterJobRow, DataFileRow, TransactionRow, ViewRow
from alterflow.engine.session import ResultSet, Session, StatementError
from alterflow.errors import UserError

pytestmark = pytest.mark.spark

LONG_NAME = "c" * 129

SETUP = """
    CREATE TABLE pk_tab (
        k INT NOT NULL, region VARCHAR(8) NOT NULL, shard INT NOT NULL,
        v INT, s STRING, d DATE, vc VARCHAR(10), m DECIMAL(5,2), note STRING,
        PRIMARY KEY (k, region, shard)
    ) PARTITION BY (region) DISTRIBUTED BY HASH(shard) BUCKETS 2;
    INSERT INTO pk_tab VALUES
        (1, 'eu', 1, 10, 'one', '2024-01-01', 'abc', 1.50, 'n1'),
        (2, 'us', 2, 20, 'two', '2024-01-02', 'def', 2.50, 'n2'),
        (3, 'eu', 3, 30, NULL, NULL, NULL, NULL, NULL);
    CREATE TABLE plain_tab (a INT, p DATE, h INT, b STRING) PARTITION BY (p) DISTRIBUTED BY HASH(h) BUCKETS 2;
    INSERT INTO plain_tab VALUES (1, '2024-01-01', 1, 'x'), (2, '2024-01-02', 2, 'y');
    CREATE TABLE one_col (only_c INT);
    CREATE VIEW pk_view AS SELECT k, v, note FROM pk_tab;
"""


def _settings(home):
    from alterflow.settings import Settings

    return Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]"})


@pytest.fixture(scope="module")
def template_home(tmp_path_factory, spark):
    """The tables, built once; every test gets its own copy of the catalog and warehouse."""
    home = tmp_path_factory.mktemp("bad_input") / "home"
    session = Session(_settings(home))
    list(session.run(SETUP))
    session.catalog.engine.dispose()  # checkpoints SQLite's WAL into the file copied below
    return home


@pytest.fixture
def tables(template_home, tmp_path):
    """A session on a private copy of: pk_tab (primary key (k, region, shard), partition column
    region, distribution column shard, a view pk_view on k, v, note), plain_tab (no key; partition
    column p, distribution column h), one_col (a single column)."""
    home = tmp_path / "home"
    shutil.copytree(template_home, home)
    session = Session(_settings(home))
    yield session
    session.catalog.engine.dispose()


def _rows(session, sql: str):
    (result,) = list(session.run(sql))
    assert isinstance(result, ResultSet)
    return result.rows


def fingerprint(session) -> dict:
    cat = session.catalog
    fp: dict = {"tables": [(t.id, t.name, t.current_version, t.next_column_id, t.current_index_id) for t in cat.tables()]}
    for t in cat.tables():
        fp[f"versions {t.name}"] = _rows(session, f"SHOW SCHEMA VERSIONS FROM {t.name}")
        fp[f"describe {t.name}"] = _rows(session, f"DESCRIBE {t.name}")
        fp[f"files {t.name}"] = cat.snapshot(t.name).files
        fp[f"stats {t.name}"] = cat.table_stats(t.id)
        fp[f"tablets {t.name}"] = cat.tablets(t.current_index_id)
    fp["jobs"] = _rows(session, "SHOW ALTER TABLE COLUMN")
    with cat.db_session() as s:
        fp["views"] = s.execute(select(ViewRow.id, ViewRow.name, ViewRow.name_key).order_by(ViewRow.id)).all()
        # A load streams its input, so it may find a bad value after its transaction began: that
        # transaction ends ABORTED with nothing visible (docs/heavyweight.md: loads). Every other one must stay.
        fp["transactions"] = s.execute(
            select(TransactionRow.id, TransactionRow.state).where(TransactionRow.state != "ABORTED").order_by(TransactionRow.id)
        ).all()
        fp["aborted with files"] = s.execute(
            select(DataFileRow.txn_id)
            .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
            .where(TransactionRow.state == "ABORTED", DataFileRow.state == "LIVE")
        ).all()
    fp["disk"] = sorted(str(p.relative_to(session.warehouse)) for p in session.warehouse.rglob("*"))
    return fp


def _names(message: str, name: str) -> bool:
    """`name` appears in `message` as a whole word (optionally quoted)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Case:
    id: str
    sql: str
    names: tuple[str, ...]  # table / column / view names the message must name (whole words)
    rule: tuple[str, ...]  # phrases of the rule the message must contain (case-insensitive)


def C(id, sql, names, *rule):  # noqa: N802 - a compact table of cases
    return pytest.param(Case(id, sql, tuple(names), tuple(rule)), id=id)


CASES = [
    # -- docs/semantics.md, rejected: key, partition and distribution columns ------------------
    C("drop_pk", "ALTER TABLE pk_tab DROP COLUMN k", ["pk_tab", "k"], "primary-key"),
    C("rename_pk", "ALTER TABLE pk_tab RENAME COLUMN k TO k2", ["pk_tab", "k"], "primary-key"),
    C("retype_pk", "ALTER TABLE pk_tab MODIFY COLUMN k BIGINT", ["pk_tab", "k"], "primary-key"),
    C("drop_pk_partition", "ALTER TABLE pk_tab DROP COLUMN region", ["pk_tab", "region"], "primary-key"),
    C("drop_partition", "ALTER TABLE plain_tab DROP COLUMN p", ["plain_tab", "p"], "partition"),
    C("rename_partition", "ALTER TABLE plain_tab RENAME COLUMN p TO p2", ["plain_tab", "p"], "partition"),
    C("retype_partition", "ALTER TABLE plain_tab MODIFY COLUMN p DATETIME", ["plain_tab", "p"], "partition"),
    C("drop_distribution", "ALTER TABLE plain_tab DROP COLUMN h", ["plain_tab", "h"], "distribution"),
    C("rename_distribution", "ALTER TABLE plain_tab RENAME COLUMN h TO h2", ["plain_tab", "h"], "distribution"),
    C("retype_distribution", "ALTER TABLE plain_tab MODIFY COLUMN h BIGINT", ["plain_tab", "h"], "distribution"),
    # -- NOT NULL and defaults -----------------------------------------------------------------
    C("add_not_null_no_default", "ALTER TABLE pk_tab ADD COLUMN z INT NOT NULL", ["pk_tab", "z"], "NOT NULL", "DEFAULT"),
    C(
        "add_not_null_default_null",
        "ALTER TABLE pk_tab ADD COLUMN z INT NOT NULL DEFAULT NULL",
        ["pk_tab", "z"],
        "DEFAULT NULL",
        "NOT NULL",
    ),
    C("add_default_not_int", "ALTER TABLE pk_tab ADD COLUMN z INT DEFAULT 'abc'", ["pk_tab", "z"], "DEFAULT", "INT"),
    C("add_default_too_long", "ALTER TABLE pk_tab ADD COLUMN z VARCHAR(3) DEFAULT 'abcdef'", ["pk_tab", "z"], "DEFAULT", "VARCHAR(3)"),
    C("add_default_scale", "ALTER TABLE pk_tab ADD COLUMN z DECIMAL(5,2) DEFAULT '1.234'", ["pk_tab", "z"], "DEFAULT", "DECIMAL(5,2)"),
    C("add_default_bad_date", "ALTER TABLE pk_tab ADD COLUMN z DATE DEFAULT '2024-02-30'", ["pk_tab", "z"], "DEFAULT", "DATE"),
    C("set_default_out_of_range", "ALTER TABLE pk_tab ALTER COLUMN v SET DEFAULT 99999999999", ["pk_tab", "v"], "DEFAULT", "INT"),
    C(
        "modify_default_not_fit",
        "ALTER TABLE pk_tab MODIFY COLUMN m DECIMAL(5,2) DEFAULT '1234.5'",
        ["pk_tab", "m"],
        "DEFAULT",
        "DECIMAL(5,2)",
    ),
    C(
        "modify_widen_default_not_fit",
        "ALTER TABLE pk_tab MODIFY COLUMN d DATETIME DEFAULT 'not a time'",
        ["pk_tab", "d"],
        "DEFAULT",
        "DATETIME",
    ),
    # -- type changes outside the lists ----------------------------------------------------------
    C("date_to_int", "ALTER TABLE pk_tab MODIFY COLUMN d INT", ["pk_tab", "d"], "DATE -> INT", "not a supported type change"),
    C(
        "string_to_boolean",
        "ALTER TABLE pk_tab MODIFY COLUMN s BOOLEAN",
        ["pk_tab", "s"],
        "STRING -> BOOLEAN",
        "not a supported type change",
    ),
    C(
        "varchar_shrink",
        "ALTER TABLE pk_tab MODIFY COLUMN vc VARCHAR(5)",
        ["pk_tab", "vc"],
        "VARCHAR(10) -> VARCHAR(5)",
        "not a supported type change",
    ),
    # -- unknown objects, duplicates, last column -------------------------------------------------
    C("alter_unknown_table", "ALTER TABLE nope ADD COLUMN z INT", ["nope"], "unknown table"),
    C("drop_unknown_column", "ALTER TABLE pk_tab DROP COLUMN nope", ["pk_tab", "nope"], "unknown column"),
    C("rename_unknown_column", "ALTER TABLE pk_tab RENAME COLUMN nope TO z", ["pk_tab", "nope"], "unknown column"),
    C("modify_unknown_column", "ALTER TABLE pk_tab MODIFY COLUMN nope BIGINT", ["pk_tab", "nope"], "unknown column"),
    C("set_default_unknown_column", "ALTER TABLE pk_tab ALTER COLUMN nope SET DEFAULT 1", ["pk_tab", "nope"], "unknown column"),
    C("add_after_unknown_column", "ALTER TABLE pk_tab ADD COLUMN z INT AFTER nope", ["pk_tab", "z", "nope"], "unknown column"),
    C("add_duplicate", "ALTER TABLE pk_tab ADD COLUMN v INT", ["pk_tab", "v"], "duplicate"),
    C("add_duplicate_other_case", "ALTER TABLE pk_tab ADD COLUMN V BIGINT", ["pk_tab", "v"], "duplicate"),
    C("add_twice_in_one_statement", "ALTER TABLE pk_tab ADD COLUMN z INT, ADD COLUMN z INT", ["pk_tab", "z"], "duplicate"),
    C("rename_to_existing", "ALTER TABLE pk_tab RENAME COLUMN s TO vc", ["pk_tab", "s", "vc"], "duplicate"),
    C("drop_last_column", "ALTER TABLE one_col DROP COLUMN only_c", ["one_col", "only_c"], "last column"),
    C("drop_every_column", "ALTER TABLE one_col ADD COLUMN x INT, DROP COLUMN only_c, DROP COLUMN x", ["one_col", "x"], "last column"),
    # -- views ------------------------------------------------------------------------------------
    C("drop_view_column", "ALTER TABLE pk_tab DROP COLUMN note", ["pk_tab", "note", "pk_view"], "view"),
    C("retype_view_column", "ALTER TABLE pk_tab MODIFY COLUMN v BIGINT", ["pk_tab", "v", "pk_view"], "view"),
    C("drop_table_with_view", "DROP TABLE pk_tab", ["pk_tab", "pk_view"], "view"),
    # -- properties -----------------------------------------------------------------------------
    C(
        "expected_version",
        'ALTER TABLE pk_tab ADD COLUMN z INT PROPERTIES ("expected_version" = "7")',
        ["pk_tab", "7", "1"],
        "expected_version",
    ),
    C("unknown_property", 'ALTER TABLE pk_tab ADD COLUMN z INT PROPERTIES ("colour" = "red")', ["pk_tab", "colour"], "unknown property"),
    C("bad_timeout", 'ALTER TABLE pk_tab ADD COLUMN z INT PROPERTIES ("timeout" = "-1")', ["pk_tab", "timeout"], "positive integer"),
    C(
        "bad_on_cast_error",
        'ALTER TABLE pk_tab ADD COLUMN z INT PROPERTIES ("on_cast_error" = "maybe")',
        ["pk_tab", "on_cast_error", "maybe"],
        "fail, null or quarantine",
    ),
    C("bad_rewrite", 'ALTER TABLE pk_tab ADD COLUMN z INT PROPERTIES ("rewrite" = "yes")', ["pk_tab", "rewrite", "yes"], "true or false"),
    # -- all clauses or none ---------------------------------------------------------------------
    C("second_clause_rejected", "ALTER TABLE pk_tab ADD COLUMN z INT, DROP COLUMN k", ["pk_tab", "k"], "primary-key"),
    C("first_clause_rejected", "ALTER TABLE pk_tab DROP COLUMN nope, ADD COLUMN z INT", ["pk_tab", "nope"], "unknown column"),
    # -- docs/semantics.md, "Bad input": names -----------------------------------------------------
    C("table_name_dash", "CREATE TABLE `a-b` (x INT)", ["a-b"], "invalid name"),
    C("table_name_129", f"CREATE TABLE {LONG_NAME} (x INT)", [LONG_NAME], "128"),
    C("table_name_qualified", "CREATE TABLE db.x (x INT)", ["db.x"], "qualified"),
    C("table_name_path", "CREATE TABLE `../../escape` (x INT)", ["../../escape"], "invalid name"),
    C("table_name_sql", "CREATE TABLE `x'; DROP TABLE af_tables; --` (x INT)", [], "invalid name"),
    C("column_name_dash", "ALTER TABLE pk_tab ADD COLUMN `a-b` INT", ["pk_tab", "a-b"], "invalid name"),
    C("column_name_129", f"ALTER TABLE pk_tab ADD COLUMN {LONG_NAME} INT", ["pk_tab", LONG_NAME], "128"),
    C("rename_to_bad_name", "ALTER TABLE pk_tab RENAME COLUMN s TO `s s`", ["pk_tab", "s"], "invalid name"),
    C("create_column_name_dash", "CREATE TABLE good (`a-b` INT)", ["good", "a-b"], "invalid name"),
    # -- INSERT -------------------------------------------------------------------------------
    C("insert_unknown_column", "INSERT INTO pk_tab (k, region, shard, nope) VALUES (9, 'eu', 1, 1)", ["pk_tab", "nope"], "unknown column"),
    C("insert_too_few_values", "INSERT INTO pk_tab VALUES (9, 'eu', 1)", ["pk_tab"], "values"),
    C("insert_more_values_than_columns", "INSERT INTO pk_tab (k, region, shard) VALUES (9, 'eu', 1, 4)", ["pk_tab"], "values"),
    C(
        "insert_out_of_range",
        "INSERT INTO pk_tab (k, region, shard, v) VALUES (9, 'eu', 1, 99999999999)",
        ["pk_tab", "v"],
        "does not fit",
        "INT",
    ),
    C("insert_too_long", "INSERT INTO pk_tab (k, region, shard, vc) VALUES (9, 'eu', 1, 'abcdefghijk')", ["pk_tab", "vc"], "VARCHAR(10)"),
    C("insert_decimal_scale", "INSERT INTO pk_tab (k, region, shard, m) VALUES (9, 'eu', 1, 1.234)", ["pk_tab", "m"], "DECIMAL(5,2)"),
    C("insert_bad_date", "INSERT INTO pk_tab (k, region, shard, d) VALUES (9, 'eu', 1, '2024-02-30')", ["pk_tab", "d"], "DATE"),
    C("insert_null_not_null", "INSERT INTO pk_tab (k, region, shard) VALUES (NULL, 'eu', 1)", ["pk_tab", "k"], "NOT NULL"),
    C("insert_omits_not_null", "INSERT INTO pk_tab (k, region) VALUES (9, 'eu')", ["pk_tab", "shard"], "NOT NULL", "default"),
    C(
        "insert_second_row_bad",
        "INSERT INTO pk_tab (k, region, shard, v) VALUES (9, 'eu', 1, 1), (10, 'eu', 1, 'x')",
        ["pk_tab", "v"],
        "row 2",
    ),
    C("insert_column_twice", "INSERT INTO pk_tab (k, region, shard, k) VALUES (9, 'eu', 1, 9)", ["pk_tab", "k"], "twice"),
    C("insert_unknown_table", "INSERT INTO nope VALUES (1)", ["nope"], "unknown table"),
    C("insert_select_count", "INSERT INTO plain_tab (a) SELECT k, v FROM pk_tab", ["plain_tab"], "columns"),
    C("insert_select_out_of_range", "INSERT INTO one_col SELECT CAST(v AS BIGINT) * 1000000000 FROM pk_tab", ["one_col", "only_c"], "INT"),
    C("insert_select_missing_column", "INSERT INTO one_col SELECT nope FROM pk_tab", ["nope"], ""),
    # -- CREATE / DROP -------------------------------------------------------------------------
    C("create_pk_unknown_column", "CREATE TABLE good (a INT NOT NULL, PRIMARY KEY (b))", ["good", "b"], "unknown column", "primary key"),
    C("create_pk_double", "CREATE TABLE good (a DOUBLE NOT NULL, PRIMARY KEY (a))", ["good", "a"], "primary key", "DOUBLE"),
    C("create_pk_nullable", "CREATE TABLE good (a INT NULL, PRIMARY KEY (a))", ["good", "a"], "primary-key"),
    C(
        "create_partition_not_in_pk",
        "CREATE TABLE good (a INT NOT NULL, b INT, PRIMARY KEY (a)) PARTITION BY (b)",
        ["good", "b"],
        "partition",
        "primary key",
    ),
    C("create_partition_unknown", "CREATE TABLE good (a INT) PARTITION BY (zz)", ["good", "zz"], "unknown column", "partition"),
    C(
        "create_distribution_not_in_pk",
        "CREATE TABLE good (a INT NOT NULL, b INT, PRIMARY KEY (a)) DISTRIBUTED BY HASH(b) BUCKETS 2",
        ["good", "b"],
        "distribution",
        "primary key",
    ),
    C(
        "create_distribution_unknown",
        "CREATE TABLE good (a INT) DISTRIBUTED BY HASH(zz) BUCKETS 2",
        ["good", "zz"],
        "unknown column",
        "distribution",
    ),
    C("create_distribution_float", "CREATE TABLE good (a FLOAT) DISTRIBUTED BY HASH(a) BUCKETS 2", ["good", "a"], "distribution", "FLOAT"),
    C("create_duplicate_column", "CREATE TABLE good (a INT, A STRING)", ["good", "a"], "duplicate"),
    C("create_existing_table", "CREATE TABLE plain_tab (a INT)", ["plain_tab"], "already exists"),
    C("create_existing_table_other_case", "CREATE TABLE PLAIN_TAB (a INT)", ["plain_tab"], "already exists"),
    C("create_table_named_like_view", "CREATE TABLE pk_view (a INT)", ["pk_view"], "view"),
    C("create_default_not_fit", "CREATE TABLE good (a TINYINT DEFAULT 300)", ["good", "a"], "DEFAULT", "TINYINT"),
    C("drop_missing_table", "DROP TABLE nope", ["nope"], "unknown table"),
    C("drop_missing_view", "DROP VIEW nope", ["nope"], "unknown view"),
    # -- queries and views (Spark) ---------------------------------------------------------------
    C("select_missing_table", "SELECT * FROM nope", ["nope"], "unknown table"),
    C("select_missing_column", "SELECT nope FROM pk_tab", ["nope"], ""),
    C("view_missing_table", "CREATE VIEW v2 AS SELECT * FROM nope", ["v2", "nope"], "unknown table"),
    C("view_missing_column", "CREATE VIEW v2 AS SELECT nope FROM pk_tab", ["v2", "nope"], ""),
    C("view_named_like_table", "CREATE VIEW plain_tab AS SELECT * FROM pk_tab", ["plain_tab"], "exists"),
    C("describe_view", "DESCRIBE pk_view", ["pk_view"], "view"),
    C("syntax_error", "ALTER TABLE pk_tab FROB COLUMN x", ["FROB"], "syntax error"),
    # -- nesting Python's stack cannot parse (sqlglot recurses per level) --------------------------
    C("nested_3000_deep", "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM pk_tab", [], "nested too deeply", "32 levels"),
    C("nested_3000_deep_in_alter", "ALTER TABLE pk_tab ADD COLUMN z INT DEFAULT " + "(" * 3000 + "1" + ")" * 3000, [], "nested too deeply"),
    C("nested_33_deep_in_view", "CREATE VIEW v2 AS SELECT " + "(" * 33 + "k" + ")" * 33 + " FROM pk_tab", [], "nested too deeply"),
]


def assert_rejected(session, sql: str, names=(), rule=()) -> str:
    """Run `sql`, expect ONE rejection line naming `names` and `rule`, and nothing changed.
    (That the exception is a StatementError is checked for all cases at once, below.)"""
    before = fingerprint(session)
    with pytest.raises(Exception) as info:
        list(session.run(sql))
    message = str(info.value)
    after = fingerprint(session)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"{sql!r} changed {changed}: {message}"
    assert message and message == message.strip(), repr(message)
    assert "\n" not in message and "\r" not in message, f"not one line: {message!r}"
    for name in names:
        assert _names(message, name), f"message does not name {name!r}: {message}"
    for phrase in rule:
        assert phrase.lower() in message.lower(), f"message does not give the rule {phrase!r}: {message}"
    assert "Traceback" not in message
    assert isinstance(info.value, UserError), f"{type(info.value).__name__}: {message}"
    return message


@pytest.mark.parametrize("case", CASES)
def test_rejected_changes_nothing(tables, case: Case):
    assert_rejected(tables, case.sql, case.names, case.rule)


def test_every_rejection_is_a_statement_error(tables):
    """Session's contract: a failing statement raises StatementError (whose message is the line the
    user sees), whatever layer noticed the problem (parser, planner, catalog, row checks, Spark).
    Rejections change nothing, so every case runs against the same tables here."""
    wrong = []
    for param in CASES:
        case = param.values[0]
        try:
            list(tables.run(case.sql))
        except StatementError:
            continue
        except Exception as exc:  # noqa: BLE001 - we report which type escaped
            wrong.append(f"{case.id}: {type(exc).__module__}.{type(exc).__name__}: {str(exc).splitlines()[0]}")
        else:
            wrong.append(f"{case.id}: no error")
    assert not wrong, "not a StatementError:\n" + "\n".join(wrong)


def test_fixture_tables_are_as_expected(tables):
    """The cases above rely on this state (and a good statement does change the fingerprint)."""
    assert _rows(tables, "SELECT count(*) FROM pk_tab") == ((3,),)
    assert _rows(tables, "SELECT * FROM pk_view ORDER BY k") == ((1, 10, "n1"), (2, 20, "n2"), (3, 30, None))
    assert [r[0] for r in _rows(tables, "DESCRIBE plain_tab")] == ["a", "p", "h", "b"]
    assert len(tables.catalog.snapshot("pk_tab").files) >= 2
    before = fingerprint(tables)
    list(tables.run("ALTER TABLE pk_tab ADD COLUMN z INT"))
    after = fingerprint(tables)
    assert before["versions pk_tab"] != after["versions pk_tab"]
    assert before["jobs"] != after["jobs"]


def test_one_job_per_table(tables):
    """A second ALTER while a job on the table is unfinished is rejected naming the job (the job row
    is made by hand: this build has no heavyweight executor yet)."""
    other = Catalog(tables.settings.catalog_url)
    info, version = other.current_schema("plain_tab")
    with other.db_session() as s, s.begin():
        row = AlterJobRow(
            request_id="test-running-job",
            table_id=info.id,
            table_name=info.name,
            kind="HEAVY",
            state="RUNNING",
            statement="ALTER TABLE plain_tab ORDER BY (a)",
            properties=json.dumps({}),
            from_version=version.version,
            to_version=version.version + 1,
            boundary_txn=None,
            msg="",
            progress="1/2 tablets",
            steps=json.dumps([]),
            timeout_s=86400,
            created_at=datetime(2024, 1, 1),
            finished_at=None,
        )
        s.add(row)
        s.flush()
        job_id = row.id
    for sql in (
        "ALTER TABLE plain_tab ADD COLUMN z INT",
        "ALTER TABLE plain_tab RENAME COLUMN b TO b2",
        "ALTER TABLE plain_tab ALTER COLUMN b SET DEFAULT 'q'",
    ):
        message = assert_rejected(tables, sql, ["plain_tab"], (f"job {job_id}",))
        assert "RUNNING" in message and "one job per table" in message, message
    message = assert_rejected(tables, "DROP TABLE plain_tab", ["plain_tab"], (f"job {job_id}",))
    # the other tables are not blocked
    list(tables.run("ALTER TABLE one_col ADD COLUMN other INT"))
    assert [r[0] for r in _rows(tables, "DESCRIBE one_col")] == ["only_c", "other"]


def test_rejected_alter_is_explained_and_changes_nothing(tables):
    """EXPLAIN ALTER shows the rejected clause with the same one-line reason, and changes nothing."""
    before = fingerprint(tables)
    rows = _rows(tables, "EXPLAIN ALTER TABLE pk_tab ADD COLUMN z INT, DROP COLUMN k")
    assert fingerprint(tables) == before
    kinds = {r[0]: (r[1], r[2]) for r in rows}
    assert kinds["ADD COLUMN z INT"][0] == "LIGHT"
    assert kinds["DROP COLUMN k"] == ("REJECTED", "ALTER TABLE pk_tab: cannot drop column k: it is a primary-key column")
    assert kinds["(statement)"][0] == "REJECTED"


def test_rejection_in_a_script_keeps_the_statements_before_it(tables):
    """Session.run stops at the first failing statement; those before it stay done."""
    with pytest.raises(StatementError, match=r"^ALTER TABLE pk_tab: unknown column nope$"):
        list(
            tables.run(
                "ALTER TABLE one_col ADD COLUMN first_done INT; ALTER TABLE pk_tab DROP COLUMN nope;"
                " ALTER TABLE one_col ADD COLUMN never INT"
            )
        )
    assert [r[0] for r in _rows(tables, "DESCRIBE one_col")] == ["only_c", "first_done"]
