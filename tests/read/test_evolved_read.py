"""Reading old data under a newer schema (docs/semantics.md, "Reading old data under a newer schema"), through real Parquet files and Spark.

Every test writes data under several schema versions (each INSERT is one transaction, each ALTER one
new version) and reads it back, either with SQL (`SELECT * FROM t`) or with `read_snapshot` on a
catalog snapshot when the test looks at the Spark plan or pins an older target version.

Values are compared strictly (`strict`): the Python type must match too, so a BIGINT that comes back
as a Decimal, a DECIMAL with the wrong scale or a DATE that should be a DATETIME is a failure.
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from decimal import Decimal

import pytest

from alterflow.engine.session import ResultSet
from alterflow.errors import UserError
from alterflow.read.evolved_read import read_snapshot, reading_tasks
from tests.support.values import strict

pytestmark = pytest.mark.spark


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------


def f32(value: float) -> float:
    """`value` rounded to float32 and widened back, the way Spark casts FloatType to DoubleType."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def query(session, sql: str) -> tuple[tuple[str, ...], tuple[tuple, ...]]:
    """(column names, rows) of the last statement of `sql`."""
    results = list(session.run(sql))
    last = results[-1]
    assert isinstance(last, ResultSet), last
    return last.columns, last.rows


def assert_rows(actual, expected) -> None:
    assert len(actual) == len(expected), f"{len(actual)} rows, expected {len(expected)}:\n{actual}\n{expected}"
    for got, want in zip(actual, expected):
        assert strict(got) == strict(want), f"\n  got      {got!r}\n  expected {want!r}"


def current_version(session, table: str) -> int:
    return session.catalog.table(table).current_version


def read_frame(session, spark, table: str, target_version: int | None = None):
    snapshot = session.catalog.snapshot(table)
    target = None
    if target_version is not None:
        target = session.catalog.schema_version(snapshot.table.id, target_version)
    return snapshot, read_snapshot(spark, session.warehouse, snapshot, target)


def collect(frame) -> tuple[tuple, ...]:
    return tuple(tuple(r) for r in frame.collect())


def relation_count(frame) -> int:
    """The number of file relations (scans) in the optimised logical plan."""
    plan = frame._jdf.queryExecution().optimizedPlan().toString()
    return len(re.findall(r"\bRelation \[", plan))


def read_schemas(frame) -> list[str]:
    """The ReadSchema of every FileScan of the physical plan: the columns Spark reads from the files."""
    plan = frame._jdf.queryExecution().executedPlan().toString()
    return re.findall(r"ReadSchema: (struct<[^\n]*>)", plan)


# ------------------------------------------------------------------------------------------------
# present in the file: the value, cast to the newer type (every lossless widening of docs/semantics.md)
# ------------------------------------------------------------------------------------------------

BIG = 99999999999999999999999999999999999999  # LARGEINT's largest value (a DECIMAL(38,0) in Spark,
# an int in SQL results)

# (old type, new type, [(literal written under the old type, value read under the new type)],
#  (literal written under the new type, value read))
WIDENINGS = [
    ("TINYINT", "SMALLINT", [("-128", -128), ("127", 127), ("0", 0)], ("32767", 32767)),
    ("SMALLINT", "INT", [("-32768", -32768), ("32767", 32767)], ("2147483647", 2147483647)),
    ("INT", "BIGINT", [("-2147483648", -2147483648), ("2147483647", 2147483647)], ("9223372036854775807", 9223372036854775807)),
    ("BIGINT", "LARGEINT", [("-9223372036854775808", -9223372036854775808), ("9223372036854775807", 9223372036854775807)], (str(BIG), BIG)),
    ("TINYINT", "BIGINT", [("-128", -128), ("127", 127)], ("-9223372036854775808", -9223372036854775808)),
    ("SMALLINT", "LARGEINT", [("-32768", -32768), ("7", 7)], (f"-{BIG}", -BIG)),
    (
        "FLOAT",
        "DOUBLE",
        [
            ("0.1", f32(0.1)),
            ("1.5", 1.5),
            ("-3.4028234663852886e+38", f32(-3.4028234663852886e38)),
            ("1.401298464324817e-45", f32(1.401298464324817e-45)),
            ("16777217", 16777216.0),
        ],
        ("0.1", 0.1),
    ),
    ("DECIMAL(5,2)", "DECIMAL(7,2)", [("999.99", Decimal("999.99")), ("-0.01", Decimal("-0.01"))], ("-99999.99", Decimal("-99999.99"))),
    (
        "DECIMAL(5,2)",
        "DECIMAL(10,4)",
        [("123.45", Decimal("123.4500")), ("-999.99", Decimal("-999.9900")), ("0", Decimal("0.0000"))],
        ("123456.7891", Decimal("123456.7891")),
    ),
    (
        "DECIMAL(9,0)",
        "DECIMAL(38,10)",
        [("-999999999", Decimal("-999999999.0000000000"))],
        ("1234567890123456789012345678.0123456789", Decimal("1234567890123456789012345678.0123456789")),
    ),
    (
        "DECIMAL(18,4)",
        "DECIMAL(30,6)",
        [("99999999999999.9999", Decimal("99999999999999.999900")), ("-0.0001", Decimal("-0.000100"))],
        ("999999999999999999999999.999999", Decimal("999999999999999999999999.999999")),
    ),
    ("VARCHAR(3)", "VARCHAR(10)", [("'abc'", "abc"), ("'é中x'", "é中x"), ("''", "")], ("'abcdefghij'", "abcdefghij")),
    ("VARCHAR(3)", "STRING", [("'a''b'", "a'b"), ("' z '", " z ")], ("'a long string'", "a long string")),
    ("CHAR(2)", "VARCHAR(5)", [("'xy'", "xy"), ("'z'", "z")], ("'vwxyz'", "vwxyz")),
    ("CHAR(2)", "STRING", [("'中é'", "中é")], ("'longer than two'", "longer than two")),
    ("CHAR(2)", "CHAR(2)", [("'ab'", "ab")], ("'cd'", "cd")),  # no change at all: still readable
    (
        "DATE",
        "DATETIME",
        [
            ("'2024-02-29'", dt.datetime(2024, 2, 29)),
            ("'0001-01-01'", dt.datetime(1, 1, 1)),
            ("'9999-12-31'", dt.datetime(9999, 12, 31)),
            ("'1582-10-10'", dt.datetime(1582, 10, 10)),
        ],
        ("'2024-01-01 12:34:56.789'", dt.datetime(2024, 1, 1, 12, 34, 56, 789000)),
    ),
]


@pytest.mark.parametrize(("old", "new", "before", "after"), WIDENINGS, ids=[f"{w[0]}->{w[1]}" for w in WIDENINGS])
def test_widening_reads_old_values_cast_to_the_new_type(session, run, old, new, before, after):
    values = ", ".join(f"({i}, {literal})" for i, (literal, _) in enumerate(before, start=1))
    run(f"CREATE TABLE t (id INT NOT NULL, c {old}); INSERT INTO t VALUES {values}, (99, NULL)")
    run(f"ALTER TABLE t MODIFY COLUMN c {new}")
    if old != new:
        assert current_version(session, "t") == 2
    run(f"INSERT INTO t VALUES (100, {after[0]})")
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id", "c")
    expected = [(i, value) for i, (_, value) in enumerate(before, start=1)] + [(99, None), (100, after[1])]
    assert_rows(rows, expected)
    described = {r[0]: r[1] for r in run("DESCRIBE t")}
    assert described["c"] == new


def test_integer_chain_one_file_group_per_version(session, spark, run):
    """TINYINT -> SMALLINT -> INT -> BIGINT -> LARGEINT, a row written under every version."""
    run("CREATE TABLE t (id INT NOT NULL, n TINYINT); INSERT INTO t VALUES (1, -128), (2, 127)")
    for number, (new, literal) in enumerate(
        [("SMALLINT", "-32768"), ("INT", "2147483647"), ("BIGINT", "-9223372036854775808"), ("LARGEINT", str(BIG))],
        start=3,
    ):
        run(f"ALTER TABLE t MODIFY COLUMN n {new}; INSERT INTO t VALUES ({number}, {literal})")
    expected = [(1, -128), (2, 127), (3, -32768), (4, 2147483647), (5, -9223372036854775808), (6, BIG)]
    assert_rows(run("SELECT * FROM t ORDER BY id"), expected)  # SQL results give LARGEINT as int
    snapshot, frame = read_frame(session, spark, "t")
    assert sorted({f.schema_version for f in snapshot.files}) == [1, 2, 3, 4, 5]
    assert 1 <= relation_count(frame) <= 5  # one scan per version at most, never one per file
    assert_rows(sorted(collect(frame)), [(i, Decimal(v)) for i, v in expected])  # Spark: DECIMAL(38,0)


def test_decimal_chain_keeps_every_value_at_the_newest_scale(run):
    run("CREATE TABLE t (id INT NOT NULL, d DECIMAL(4,1)); INSERT INTO t VALUES (1, 999.9), (2, -0.1)")
    run("ALTER TABLE t MODIFY COLUMN d DECIMAL(6,2); INSERT INTO t VALUES (3, 9999.99)")
    run("ALTER TABLE t MODIFY COLUMN d DECIMAL(20,5); INSERT INTO t VALUES (4, 123456789012345.12345)")
    assert_rows(
        run("SELECT * FROM t ORDER BY id"),
        [(1, Decimal("999.90000")), (2, Decimal("-0.10000")), (3, Decimal("9999.99000")), (4, Decimal("123456789012345.12345"))],
    )


def test_char_varchar_string_chain(run):
    run("CREATE TABLE t (id INT NOT NULL, s CHAR(2)); INSERT INTO t VALUES (1, 'ab'), (2, 'é')")
    run("ALTER TABLE t MODIFY COLUMN s VARCHAR(4); INSERT INTO t VALUES (3, 'abcd')")
    run("ALTER TABLE t MODIFY COLUMN s VARCHAR(8); INSERT INTO t VALUES (4, 'abcdefgh')")
    run("ALTER TABLE t MODIFY COLUMN s STRING; INSERT INTO t VALUES (5, 'no limit at all')")
    assert_rows(
        run("SELECT * FROM t ORDER BY id"),
        [(1, "ab"), (2, "é"), (3, "abcd"), (4, "abcdefgh"), (5, "no limit at all")],
    )


# (type, default literal, type after widening, value old rows read before and after the widening)
DEFAULT_WIDENINGS = [
    ("INT", "7", "BIGINT", 7, 7),
    ("TINYINT", "-5", "LARGEINT", -5, -5),
    ("DECIMAL(5,2)", "1.5", "DECIMAL(10,4)", Decimal("1.50"), Decimal("1.5000")),
    ("DATE", "'2024-01-31'", "DATETIME", dt.date(2024, 1, 31), dt.datetime(2024, 1, 31)),
    ("CHAR(2)", "'ab'", "STRING", "ab", "ab"),
    ("VARCHAR(2)", "'x'", "VARCHAR(9)", "x", "x"),
    ("FLOAT", "0.5", "DOUBLE", 0.5, 0.5),
    # 0.1 is not a float32: the rows that existed read float32(0.1) under FLOAT, and a lossless
    # widening must keep that value (the same value the rows that stored the default read).
    ("FLOAT", "0.1", "DOUBLE", f32(0.1), f32(0.1)),
]


@pytest.mark.parametrize(
    ("old", "literal", "new", "before", "after"),
    DEFAULT_WIDENINGS,
    ids=[f"{w[0]}={w[1]}->{w[2]}" for w in DEFAULT_WIDENINGS],
)
def test_widening_keeps_the_initial_default_of_old_rows(session, run, old, literal, new, before, after):
    """Row 1 predates the column (reads the initial default); row 2 stored the write default. A widening
    casts both alike: the rows had the same value before it and have the same value after it."""
    run(f"""
        CREATE TABLE t (id INT NOT NULL);
        INSERT INTO t VALUES (1);
        ALTER TABLE t ADD COLUMN c {old} DEFAULT {literal};
        INSERT INTO t (id) VALUES (2);
    """)
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, before), (2, before)])
    run(f"ALTER TABLE t MODIFY COLUMN c {new}")
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, after), (2, after)])


# ------------------------------------------------------------------------------------------------
# absent from the file: the initial default, else NULL
# ------------------------------------------------------------------------------------------------

# (column definition added by ALTER, value every row written before it reads)
DEFAULTS = [
    ("b_true BOOLEAN DEFAULT TRUE", True),
    ("b_false BOOLEAN DEFAULT FALSE", False),
    ("b_text BOOLEAN DEFAULT '0'", False),
    ("ti TINYINT DEFAULT -128", -128),
    ("si SMALLINT DEFAULT 32767", 32767),
    ("i INT DEFAULT -2147483648", -2147483648),
    ("i_text INT DEFAULT '12'", 12),
    ("bi BIGINT DEFAULT 9223372036854775807", 9223372036854775807),
    ("li LARGEINT DEFAULT -99999999999999999999999999999999999999", -BIG),
    ("f FLOAT DEFAULT 0.1", f32(0.1)),
    ("f_big FLOAT DEFAULT 3.4e38", f32(3.4e38)),
    ("f_neg FLOAT DEFAULT -2", -2.0),
    ("dbl DOUBLE DEFAULT 2.5e-300", 2.5e-300),
    ("dbl_neg DOUBLE DEFAULT -0.1", -0.1),
    ("dbl_big DOUBLE DEFAULT 1.7976931348623157e308", 1.7976931348623157e308),
    ("dbl_int DOUBLE DEFAULT 3", 3.0),
    ("dec DECIMAL(10,3) DEFAULT -1.5", Decimal("-1.500")),
    ("dec_zero DECIMAL(4,2) DEFAULT 0", Decimal("0.00")),
    ("dec_wide DECIMAL(38,0) DEFAULT 12345678901234567890123456789012345678", Decimal("12345678901234567890123456789012345678")),
    ("dec_frac DECIMAL(38,37) DEFAULT '-9.9999999999999999999999999999999999999'", Decimal("-9.9999999999999999999999999999999999999")),
    ("ch CHAR(3) DEFAULT 'ab'", "ab"),
    ("vc VARCHAR(10) DEFAULT 'it''s é中'", "it's é中"),
    ("st STRING DEFAULT ''", ""),
    ("st_null_text STRING DEFAULT 'NULL'", "NULL"),
    ("d DATE DEFAULT '2024-02-29'", dt.date(2024, 2, 29)),
    ("d_kw DATE DEFAULT DATE '1999-12-31'", dt.date(1999, 12, 31)),
    ("d_old DATE DEFAULT '0001-01-01'", dt.date(1, 1, 1)),
    ("ts DATETIME DEFAULT '2024-01-02 03:04:05.000001'", dt.datetime(2024, 1, 2, 3, 4, 5, 1)),
    ("ts_day TIMESTAMP DEFAULT '2024-01-02'", dt.datetime(2024, 1, 2)),
    ("ts_t DATETIME DEFAULT '2024-01-02T23:59:59.5'", dt.datetime(2024, 1, 2, 23, 59, 59, 500000)),
    ("nn INT NOT NULL DEFAULT 42", 42),
    ("nodef VARCHAR(5)", None),
    ("defnull INT DEFAULT NULL", None),
    ("nodate DATE", None),
]


def test_absent_columns_read_their_initial_default_else_null(session, spark, run):
    run("CREATE TABLE t (id INT NOT NULL); INSERT INTO t VALUES (1), (2)")
    for definition, _ in DEFAULTS:
        run(f"ALTER TABLE t ADD COLUMN {definition}")
    run("INSERT INTO t (id) VALUES (3)")  # stores every write default (still the initial default)
    names = tuple(d.split()[0] for d, _ in DEFAULTS)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id",) + names
    wrong = []
    for row in rows:
        for (definition, expected), got in zip(DEFAULTS, row[1:]):
            if strict(got) != strict(expected):
                wrong.append(f"row {row[0]}: {definition}: got {got!r}, expected {expected!r}")
    assert not wrong, "\n".join(wrong)
    # the rows written before the ALTERs are read from one file group: only `id` is read from them
    snapshot, frame = read_frame(session, spark, "t")
    schemas = read_schemas(frame)
    assert "struct<id:int>" in schemas, schemas


def test_float_default_at_the_float32_limit(session, run):
    """3.4028234663852886e38 is the largest FLOAT and a valid value, so it is a valid DEFAULT too."""
    run("CREATE TABLE t (id INT NOT NULL); INSERT INTO t VALUES (1)")
    run("ALTER TABLE t ADD COLUMN f FLOAT DEFAULT 3.4028234663852886e38")
    run("INSERT INTO t (id) VALUES (2)")
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, f32(3.4028234663852886e38)), (2, f32(3.4028234663852886e38))])


def test_added_column_reads_default_in_every_older_version_group(run):
    """Files of several versions that all lack the column read the same initial default."""
    run("CREATE TABLE t (id INT NOT NULL, a INT); INSERT INTO t VALUES (1, 1)")
    run("ALTER TABLE t ADD COLUMN b INT; INSERT INTO t VALUES (2, 2, 2)")
    run("ALTER TABLE t ADD COLUMN c DECIMAL(6,2) DEFAULT 3.25; INSERT INTO t (id) VALUES (3)")
    run("ALTER TABLE t ADD COLUMN d STRING DEFAULT 'dd' FIRST")
    assert_rows(
        run("SELECT * FROM t ORDER BY id"),
        [("dd", 1, 1, None, Decimal("3.25")), ("dd", 2, 2, 2, Decimal("3.25")), ("dd", 3, None, None, Decimal("3.25"))],
    )


# ------------------------------------------------------------------------------------------------
# dropped columns, drop + re-add
# ------------------------------------------------------------------------------------------------


def test_dropped_column_is_ignored_and_not_read(session, spark, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, secret STRING, z DOUBLE);
        INSERT INTO t VALUES (1, 10, 'old-1', 1.5), (2, 20, 'old-2', 2.5);
        ALTER TABLE t DROP COLUMN secret;
        INSERT INTO t VALUES (3, 30, 3.5);
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id", "a", "z")
    assert_rows(rows, [(1, 10, 1.5), (2, 20, 2.5), (3, 30, 3.5)])
    _snapshot, frame = read_frame(session, spark, "t")
    schemas = read_schemas(frame)
    assert 1 <= len(schemas) <= 2 and all("secret" not in s for s in schemas), schemas
    with pytest.raises(Exception, match="secret"):
        query(session, "SELECT secret FROM t")


def test_drop_then_re_add_never_brings_old_values_back(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, b STRING);
        INSERT INTO t VALUES (1, 'first b');
        ALTER TABLE t DROP COLUMN b;
        ALTER TABLE t ADD COLUMN b STRING;
    """)
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, None)])
    run("""
        INSERT INTO t VALUES (2, 'second b');
        ALTER TABLE t DROP COLUMN b;
        ALTER TABLE t ADD COLUMN B INT DEFAULT 5;
        INSERT INTO t (id) VALUES (3);
        INSERT INTO t VALUES (4, 6);
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id", "B")
    assert_rows(rows, [(1, 5), (2, 5), (3, 5), (4, 6)])
    run("ALTER TABLE t DROP COLUMN b; ALTER TABLE t ADD COLUMN b STRING NOT NULL DEFAULT 'new' FIRST")
    assert_rows(run("SELECT * FROM t ORDER BY id"), [("new", 1), ("new", 2), ("new", 3), ("new", 4)])


def test_drop_and_re_add_in_one_statement(run):
    run("""
        CREATE TABLE t (id INT NOT NULL, b INT);
        INSERT INTO t VALUES (1, 100);
        ALTER TABLE t DROP COLUMN b, ADD COLUMN b INT DEFAULT 7;
    """)
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, 7)])


def test_rename_into_a_dropped_name_reads_the_renamed_column(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b INT);
        INSERT INTO t VALUES (1, 10, 20);
        ALTER TABLE t DROP COLUMN b;
        ALTER TABLE t RENAME COLUMN a TO b;
        INSERT INTO t VALUES (2, 30);
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id", "b")
    assert_rows(rows, [(1, 10), (2, 30)])


# ------------------------------------------------------------------------------------------------
# renames and reordering
# ------------------------------------------------------------------------------------------------


def test_swapping_two_names_follows_the_ids(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x');
        ALTER TABLE t RENAME COLUMN a TO tmp, RENAME COLUMN b TO a, RENAME COLUMN tmp TO b;
        INSERT INTO t VALUES (2, 20, 'y');
        ALTER TABLE t RENAME COLUMN b TO B_Upper;
        INSERT INTO t VALUES (3, 30, 'z');
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("id", "B_Upper", "a")
    assert_rows(rows, [(1, 10, "x"), (2, 20, "y"), (3, 30, "z")])
    assert_rows(run("SELECT a, b_upper FROM t ORDER BY id"), [("x", 10), ("y", 20), ("z", 30)])


def test_renamed_versions_share_one_scan_and_filter_right(session, spark, run):
    """A rename (even with a widening) is read by id in the shared scan; a filter on the new name is
    never checked against an old file's statistics (the old file has no column of that name)."""
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x'), (2, 11, 'y');
        ALTER TABLE t RENAME COLUMN b TO label;
        INSERT INTO t VALUES (3, 12, 'z');
        ALTER TABLE t RENAME COLUMN a TO amount, MODIFY COLUMN amount BIGINT;
        INSERT INTO t VALUES (4, 5000000000, 'w');
        ALTER TABLE t RENAME COLUMN label TO Label;
        INSERT INTO t VALUES (5, 13, 'v');
    """)
    snapshot, frame = read_frame(session, spark, "t")
    assert sorted({f.schema_version for f in snapshot.files}) == [1, 2, 3, 4]
    assert relation_count(frame) == 1
    assert frame.columns == ["id", "amount", "Label"]
    assert_rows(sorted(collect(frame)), [(1, 10, "x"), (2, 11, "y"), (3, 12, "z"), (4, 5000000000, "w"), (5, 13, "v")])
    assert_rows(run("SELECT id FROM t WHERE label = 'x'"), [(1,)])
    assert_rows(run("SELECT id FROM t WHERE amount = 11 OR amount > 4000000000 ORDER BY id"), [(2,), (4,)])
    assert_rows(run("SELECT id FROM t WHERE label IS NULL"), [])
    assert_rows(run("SELECT count(*) FROM t WHERE label IN ('y', 'z', 'v')"), [(3,)])


def test_a_name_taken_by_another_column_keeps_its_own_scan_and_filters_right(session, spark, run):
    """Spark pushes a filter down to the file column of the same name: where a name moved to another
    column, the versions before the move are read in scans of their own (by the names they had)."""
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b INT, c INT);
        INSERT INTO t VALUES (1, 10, 20, 1), (2, 11, 21, 2);
        ALTER TABLE t RENAME COLUMN a TO tmp, RENAME COLUMN b TO a, RENAME COLUMN tmp TO b;
        ALTER TABLE t DROP COLUMN c;
        ALTER TABLE t ADD COLUMN c INT DEFAULT 5;
        INSERT INTO t VALUES (3, 30, 40, 6);
    """)
    snapshot, frame = read_frame(session, spark, "t")
    assert relation_count(frame) == 2
    assert frame.columns == ["id", "b", "a", "c"]
    assert_rows(sorted(collect(frame)), [(1, 10, 20, 5), (2, 11, 21, 5), (3, 30, 40, 6)])
    assert_rows(run("SELECT id FROM t WHERE a = 20"), [(1,)])  # the old file's "a" holds 10 and 11
    assert_rows(run("SELECT id FROM t WHERE b = 11"), [(2,)])
    assert_rows(run("SELECT id FROM t WHERE c = 5 ORDER BY id"), [(1,), (2,)])  # the old file's "c" holds 1 and 2


def test_add_first_after_and_modify_moves_read_right(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x');
        ALTER TABLE t ADD COLUMN z INT DEFAULT 0 FIRST;
        INSERT INTO t VALUES (-2, 2, 20, 'y');
        ALTER TABLE t ADD COLUMN m STRING DEFAULT 'm' AFTER id;
        INSERT INTO t VALUES (-3, 3, 'mm', 30, 'z');
        ALTER TABLE t MODIFY COLUMN b STRING FIRST;
        INSERT INTO t VALUES ('w', -4, 4, 'm4', 40);
        ALTER TABLE t MODIFY COLUMN a BIGINT AFTER b, RENAME COLUMN z TO zz;
        INSERT INTO t VALUES ('v', 5000000000, -5, 5, 'm5');
        ALTER TABLE t MODIFY COLUMN id INT AFTER m;
        INSERT INTO t (id, b) VALUES (6, 'u');
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY id")
    assert columns == ("b", "a", "zz", "m", "id")
    assert_rows(
        rows,
        [
            ("x", 10, 0, "m", 1),
            ("y", 20, -2, "m", 2),
            ("z", 30, -3, "mm", 3),
            ("w", 40, -4, "m4", 4),
            ("v", 5000000000, -5, "m5", 5),
            ("u", None, 0, "m", 6),
        ],
    )
    assert [r[0] for r in run("DESCRIBE t")] == ["b", "a", "zz", "m", "id"]


# ------------------------------------------------------------------------------------------------
# defaults over time, nullability
# ------------------------------------------------------------------------------------------------


def test_set_default_changes_only_later_inserts(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, v INT);
        INSERT INTO t VALUES (1, 1);
        ALTER TABLE t ADD COLUMN c VARCHAR(5) DEFAULT 'init';
        INSERT INTO t (id) VALUES (2);
        ALTER TABLE t ALTER COLUMN c SET DEFAULT 'set1';
        INSERT INTO t (id) VALUES (3);
        ALTER TABLE t ALTER COLUMN c SET DEFAULT 'set2';
        INSERT INTO t (id, v) VALUES (4, 4);
        ALTER TABLE t ALTER COLUMN c DROP DEFAULT;
        INSERT INTO t (id) VALUES (5);
        ALTER TABLE t ALTER COLUMN c SET DEFAULT NULL;
        INSERT INTO t (id) VALUES (6);
        ALTER TABLE t ALTER COLUMN c SET DEFAULT 'last';
        INSERT INTO t VALUES (7, 7, 'given');
    """)
    assert_rows(
        run("SELECT * FROM t ORDER BY id"),
        [(1, 1, "init"), (2, None, "init"), (3, None, "set1"), (4, 4, "set2"), (5, None, None), (6, None, None), (7, 7, "given")],
    )
    assert run("DESCRIBE t")[2] == ("c", "VARCHAR(5)", "YES", "false", "last")


def test_modify_with_a_new_default_keeps_the_initial_default(run):
    run("""
        CREATE TABLE t (id INT NOT NULL);
        INSERT INTO t VALUES (1);
        ALTER TABLE t ADD COLUMN c INT DEFAULT 5;
        INSERT INTO t (id) VALUES (2);
        ALTER TABLE t MODIFY COLUMN c BIGINT DEFAULT 9;
        INSERT INTO t (id) VALUES (3);
    """)
    assert_rows(run("SELECT * FROM t ORDER BY id"), [(1, 5), (2, 5), (3, 9)])


def test_not_null_to_null(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, c INT NOT NULL DEFAULT 3);
        INSERT INTO t VALUES (1, 1);
        INSERT INTO t (id) VALUES (2);
    """)
    with pytest.raises(UserError, match="NOT NULL"):
        run("INSERT INTO t VALUES (9, NULL)")
    run("""
        ALTER TABLE t MODIFY COLUMN c INT NULL;
        INSERT INTO t VALUES (3, NULL);
        INSERT INTO t (id) VALUES (4);
        ALTER TABLE t ADD COLUMN n DATE NOT NULL DEFAULT '2020-02-02';
        INSERT INTO t VALUES (5, 5, '2021-01-01');
        ALTER TABLE t MODIFY COLUMN n DATETIME NULL;
        INSERT INTO t VALUES (6, 6, NULL);
    """)
    d1, d2 = dt.datetime(2020, 2, 2), dt.datetime(2021, 1, 1)
    assert_rows(
        run("SELECT * FROM t ORDER BY id"),
        [(1, 1, d1), (2, 3, d1), (3, None, d1), (4, 3, d1), (5, 5, d2), (6, 6, None)],
    )
    assert [r[2] for r in run("DESCRIBE t")] == ["NO", "YES", "YES"]


# ------------------------------------------------------------------------------------------------
# primary keys across versions
# ------------------------------------------------------------------------------------------------


def test_primary_key_latest_write_wins_across_versions(session, spark, run):
    run("""
        CREATE TABLE t (k INT NOT NULL, v SMALLINT, gone STRING, PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 3;
        INSERT INTO t VALUES (1, 1, 'g1'), (2, 2, 'g2'), (3, 3, 'g3'), (4, 4, 'g4');
        ALTER TABLE t DROP COLUMN gone, ADD COLUMN extra STRING DEFAULT 'e';
        INSERT INTO t VALUES (2, 20, 'x2');
        ALTER TABLE t MODIFY COLUMN v BIGINT, RENAME COLUMN extra TO ex;
        INSERT INTO t (k, v) VALUES (3, 3000000000), (5, 5), (3, 33);
        ALTER TABLE t ADD COLUMN gone STRING;
        INSERT INTO t (k) VALUES (4);
    """)
    columns, rows = query(session, "SELECT * FROM t ORDER BY k")
    assert columns == ("k", "v", "ex", "gone")
    assert_rows(rows, [(1, 1, "e", None), (2, 20, "x2", None), (3, 33, "e", None), (4, None, "e", None), (5, 5, "e", None)])
    snapshot, frame = read_frame(session, spark, "t")
    assert len({f.schema_version for f in snapshot.files}) == 4
    assert 1 <= relation_count(frame) <= 4


# ------------------------------------------------------------------------------------------------
# the plan: scans never grow with files, and at most one per version group
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("keyed", [False, True], ids=["plain", "primary-key"])
def test_each_written_version_is_scanned_once(session, spark, run, keyed):
    key = ", PRIMARY KEY (day, id)" if keyed else ""
    run(f"""
        CREATE TABLE t (day DATE NOT NULL, id INT NOT NULL, v INT{key})
            PARTITION BY (day) DISTRIBUTED BY HASH(id) BUCKETS 4;
        INSERT INTO t VALUES ('2024-01-01', 1, 1), ('2024-01-01', 2, 2), ('2024-01-02', 3, 3), ('2024-01-02', 4, 4);
        INSERT INTO t VALUES ('2024-01-01', 5, 5), ('2024-01-03', 6, 6);
        ALTER TABLE t ADD COLUMN w STRING DEFAULT 'w';
        INSERT INTO t VALUES ('2024-01-01', 7, 7, 'a'), ('2024-01-02', 8, 8, 'b'), ('2024-01-03', 9, 9, 'c');
        INSERT INTO t VALUES ('2024-01-04', 10, 10, 'd'), ('2024-01-01', 11, 11, 'e');
        ALTER TABLE t MODIFY COLUMN v BIGINT;
        ALTER TABLE t RENAME COLUMN w TO ww;
        INSERT INTO t VALUES ('2024-01-02', 12, 12, 'f'), ('2024-01-03', 13, 13, 'g'), ('2024-01-01', 14, 14, 'h');
    """)
    snapshot, frame = read_frame(session, spark, "t")
    groups = {f.schema_version for f in snapshot.files}
    assert groups == {1, 2, 4}
    assert len(snapshot.files) > 2 * len(groups)  # several files per version: partitions x buckets x loads
    # Versions the Parquet reader can read directly share one scan, the renamed one too.
    assert relation_count(frame) == len(read_schemas(frame)) == 1
    assert sorted(p.split("/")[-1] for p in frame.inputFiles()) == sorted(f.path.split("/")[-1] for f in snapshot.files)
    rows = sorted(collect(frame), key=lambda r: r[1])
    assert [r[1] for r in rows] == list(range(1, 15))
    assert [r[3] for r in rows] == ["w"] * 6 + list("abcdefgh")
    assert all(isinstance(r[2], int) for r in rows)


def test_a_single_version_is_one_scan(session, spark, run):
    run("CREATE TABLE t (id INT NOT NULL, v INT) DISTRIBUTED BY HASH(id) BUCKETS 8")
    for i in range(4):
        run(f"INSERT INTO t VALUES ({i}, {i}), ({i + 10}, {i}), ({i + 20}, {i})")
    snapshot, frame = read_frame(session, spark, "t")
    assert len(snapshot.files) >= 8
    assert relation_count(frame) == 1
    assert len(collect(frame)) == 12


def test_empty_table_reads_the_current_columns(session, spark, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a TINYINT, b STRING);
        ALTER TABLE t MODIFY COLUMN a LARGEINT, DROP COLUMN b, ADD COLUMN c DATE DEFAULT '2024-01-01' FIRST;
    """)
    columns, rows = query(session, "SELECT * FROM t")
    assert columns == ("c", "id", "a") and rows == ()
    _snapshot, frame = read_frame(session, spark, "t")
    assert [f.dataType.simpleString() for f in frame.schema.fields] == ["date", "int", "decimal(38,0)"]


# ------------------------------------------------------------------------------------------------
# a pinned (older) target version
# ------------------------------------------------------------------------------------------------


def test_read_pinned_to_an_older_version_presents_its_columns(session, spark, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x');
        ALTER TABLE t ADD COLUMN c INT DEFAULT 42;
        INSERT INTO t VALUES (2, 20, 'y', 2);
        ALTER TABLE t RENAME COLUMN a TO alpha;
        ALTER TABLE t MODIFY COLUMN b STRING FIRST;
        INSERT INTO t VALUES ('z', 3, 30, 3);
        ALTER TABLE t ADD COLUMN d STRING DEFAULT 'd' AFTER id;
        INSERT INTO t VALUES ('w', 4, 'dd', 40, 4);
    """)
    assert current_version(session, "t") == 5
    expected_by_version = {
        1: (("id", "a", "b"), [(1, 10, "x"), (2, 20, "y"), (3, 30, "z"), (4, 40, "w")]),
        2: (("id", "a", "b", "c"), [(1, 10, "x", 42), (2, 20, "y", 2), (3, 30, "z", 3), (4, 40, "w", 4)]),
        3: (("id", "alpha", "b", "c"), [(1, 10, "x", 42), (2, 20, "y", 2), (3, 30, "z", 3), (4, 40, "w", 4)]),
        4: (("b", "id", "alpha", "c"), [("x", 1, 10, 42), ("y", 2, 20, 2), ("z", 3, 30, 3), ("w", 4, 40, 4)]),
        5: (("b", "id", "d", "alpha", "c"), [("x", 1, "d", 10, 42), ("y", 2, "d", 20, 2), ("z", 3, "d", 30, 3), ("w", 4, "dd", 40, 4)]),
    }
    for version, (columns, expected) in expected_by_version.items():
        snapshot, frame = read_frame(session, spark, "t", target_version=version)
        assert tuple(frame.columns) == columns, version
        id_at = columns.index("id")
        assert_rows(sorted(collect(frame), key=lambda r: r[id_at]), expected)
        assert 1 <= relation_count(frame) <= len({f.schema_version for f in snapshot.files})


def test_pinned_read_of_a_column_dropped_later(session, spark, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b VARCHAR(3) DEFAULT 'bd');
        INSERT INTO t VALUES (1, 10, 'x');
        ALTER TABLE t DROP COLUMN b;
        INSERT INTO t VALUES (2, 20);
        ALTER TABLE t MODIFY COLUMN a BIGINT;
    """)
    _snapshot, frame = read_frame(session, spark, "t", target_version=1)
    assert tuple(frame.columns) == ("id", "a", "b")
    # b is absent from the newer files: it reads its initial default (the DEFAULT of CREATE TABLE)
    assert_rows(sorted(collect(frame)), [(1, 10, "x"), (2, 20, "bd")])


def test_view_presents_the_version_it_was_planned_against(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a INT, b STRING);
        INSERT INTO t VALUES (1, 10, 'x');
        CREATE VIEW v AS SELECT * FROM t;
        ALTER TABLE t ADD COLUMN c INT DEFAULT 1 FIRST;
        ALTER TABLE t RENAME COLUMN a TO alpha;
        INSERT INTO t VALUES (2, 2, 20, 'y');
    """)
    columns, rows = query(session, "SELECT * FROM v ORDER BY id")
    assert columns == ("id", "a", "b")
    assert_rows(rows, [(1, 10, "x"), (2, 20, "y")])


def test_a_query_reads_a_pinned_view_and_the_current_table_side_by_side(session, run):
    run("""
        CREATE TABLE t (id INT NOT NULL, a SMALLINT);
        INSERT INTO t VALUES (1, 10);
        CREATE VIEW v AS SELECT * FROM t;
        ALTER TABLE t ADD COLUMN c STRING DEFAULT 'c' AFTER id;
        ALTER TABLE t RENAME COLUMN a TO alpha;
        INSERT INTO t VALUES (2, 'cc', 20);
    """)
    columns, rows = query(session, "SELECT v.*, t.c, t.alpha FROM v JOIN t ON v.id = t.id ORDER BY v.id")
    assert columns == ("id", "a", "c", "alpha")
    assert_rows(rows, [(1, 10, "c", 10), (2, 20, "cc", 20)])


# ------------------------------------------------------------------------------------------------
# the read's own helper columns never collide with user columns
# ------------------------------------------------------------------------------------------------


def test_user_column_named_like_the_rank_helper_is_kept(session, run):
    """Names match [A-Za-z_][A-Za-z0-9_]* (docs/semantics.md, "Bad input"), so `__rank` is a valid user column."""
    run("""
        CREATE TABLE p (k INT NOT NULL, __rank INT, PRIMARY KEY (k));
        INSERT INTO p VALUES (1, 10);
        INSERT INTO p VALUES (2, 20);
    """)
    columns, rows = query(session, "SELECT * FROM p ORDER BY k")
    assert columns == ("k", "__rank")
    assert_rows(rows, [(1, 10), (2, 20)])


def test_user_column_named_like_the_txn_helper_is_kept(session, run):
    run("""
        CREATE TABLE q (k INT NOT NULL, v INT, PRIMARY KEY (k));
        INSERT INTO q VALUES (1, 10);
        ALTER TABLE q ADD COLUMN __txn INT DEFAULT 7;
        INSERT INTO q VALUES (2, 20, 3);
    """)
    columns, rows = query(session, "SELECT * FROM q ORDER BY k")
    assert columns == ("k", "v", "__txn")
    assert_rows(rows, [(1, 10, 7), (2, 20, 3)])


@pytest.mark.parametrize(
    ("sizes", "cores", "tasks"),
    [
        ([], 2, 1),  # nothing to read: one empty task
        ([1 << 10], 2, 1),  # one small file: one task
        ([1 << 10] * 40, 2, 2),  # many small files (each counted at Spark's open cost): a task per core, not per file
        ([1 << 20] * 8, 2, 2),  # 40 MiB with open costs: shared by the cores
        ([100 << 20] * 10, 2, 9),  # a large tablet: 128 MiB per task at most
        ([1 << 30] * 3, 2, 3),  # never more tasks than files
        ([4 << 20] * 1000, 2, 32),  # nor more than FILES_PER_CORE per core
    ],
)
def test_object_store_reads_are_split_into_tasks_as_sparks_file_source_splits_them(sizes, cores, tasks):
    assert reading_tasks(sizes, cores) == tasks
