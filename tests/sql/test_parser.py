"""alterflow.sql.parser: every statement form and clause of docs/semantics.md, "SQL", literals, splitting,
table extraction from queries, and bad input (docs/semantics.md, "Bad input": one clear line, a SqlError)."""

from __future__ import annotations

import pytest

from alterflow import sql as ast
from alterflow.sql.parser import SqlError, parse_statements, split_statements


def one(sql: str):
    statements = parse_statements(sql)
    assert len(statements) == 1, statements
    return statements[0]


def alter_clause(clause_sql: str):
    stmt = one(f"ALTER TABLE t {clause_sql}")
    assert isinstance(stmt, ast.AlterTable) and len(stmt.clauses) == 1
    return stmt.clauses[0]


def error(sql: str) -> str:
    with pytest.raises(SqlError) as info:
        parse_statements(sql)
    message = str(info.value)
    assert message and "\n" not in message and "Traceback" not in message
    return message


# --------------------------------------------------------------------------------------------
# CREATE TABLE / DROP TABLE


def test_create_table_full():
    stmt = one(
        "CREATE TABLE IF NOT EXISTS orders ("
        "  id BIGINT NOT NULL COMMENT 'order id',"
        "  amount DECIMAL(10, 2) NULL DEFAULT 0.00,"
        "  note VARCHAR(20) DEFAULT 'n/a',"
        "  created DATETIME,"
        "  PRIMARY KEY (id)"
        ") PARTITION BY (created) DISTRIBUTED BY HASH(id, note) BUCKETS 8 ORDER BY (id, created)"
    )
    assert stmt == ast.CreateTable(
        name="orders",
        columns=(
            ast.ColumnDef("id", "BIGINT", nullable=False, comment="order id"),
            ast.ColumnDef("amount", "DECIMAL(10,2)", nullable=True, default=ast.Literal("decimal", "0.00", "0.00")),
            ast.ColumnDef("note", "VARCHAR(20)", default=ast.Literal("string", "n/a", "'n/a'")),
            ast.ColumnDef("created", "DATETIME"),
        ),
        primary_key=("id",),
        partition_by=("created",),
        distributed_by=("id", "note"),
        buckets=8,
        order_by=("id", "created"),
        if_not_exists=True,
        sql=stmt.sql,
    )
    assert stmt.sql.startswith("CREATE TABLE IF NOT EXISTS orders (") and stmt.sql.endswith("ORDER BY (id, created)")


def test_create_table_minimal_defaults():
    assert one("create table t (a int);") == ast.CreateTable(name="t", columns=(ast.ColumnDef("a", "INT"),), sql="create table t (a int)")
    stmt = one("CREATE TABLE t (a INT)")
    assert stmt.distributed_by is None and stmt.buckets is None and stmt.primary_key == ()
    assert stmt.if_not_exists is False


@pytest.mark.parametrize(
    "written, normalised",
    [
        ("boolean", "BOOLEAN"),
        ("TINYINT", "TINYINT"),
        ("SmallInt", "SMALLINT"),
        ("INT", "INT"),
        ("integer", "INTEGER"),
        ("BIGINT", "BIGINT"),
        ("largeint", "LARGEINT"),
        ("FLOAT", "FLOAT"),
        ("DOUBLE", "DOUBLE"),
        ("decimal ( 10 , 2 )", "DECIMAL(10,2)"),
        ("DECIMAL(9)", "DECIMAL(9)"),
        ("DECIMAL", "DECIMAL"),
        ("char(3)", "CHAR(3)"),
        ("CHAR", "CHAR"),
        ("varchar(255)", "VARCHAR(255)"),
        ("VARCHAR", "VARCHAR"),
        ("string", "STRING"),
        ("DATE", "DATE"),
        ("datetime", "DATETIME"),
        ("timestamp", "TIMESTAMP"),
        ("DECIMAL(10,0)", "DECIMAL(10,0)"),
    ],
)
def test_types_are_upper_cased_without_spaces(written, normalised):
    assert one(f"CREATE TABLE t (c {written})").columns[0].type == normalised


def test_column_attributes_any_order_and_default_null():
    col = one("CREATE TABLE t (c INT DEFAULT NULL COMMENT 'x' NOT NULL)").columns[0]
    assert col == ast.ColumnDef("c", "INT", nullable=False, default=ast.Literal("null", None, "NULL"), comment="x")
    assert one("CREATE TABLE t (c INT default null)").columns[0].default == ast.Literal("null", None, "NULL")


def test_create_table_backquoted_and_keyword_names():
    stmt = one("CREATE TABLE `Events` (`date` DATE, `order` INT, comment_ STRING)")
    assert stmt.name == "Events"
    assert [c.name for c in stmt.columns] == ["date", "order", "comment_"]


def test_create_table_clauses_in_any_order():
    stmt = one("CREATE TABLE t (a INT, b INT) ORDER BY (b) DISTRIBUTED BY HASH(a) BUCKETS 2 PARTITION BY (a)")
    assert (stmt.order_by, stmt.distributed_by, stmt.buckets, stmt.partition_by) == (("b",), ("a",), 2, ("a",))


def test_drop_table():
    assert one("DROP TABLE t") == ast.DropTable("t", if_exists=False)
    assert one("drop table if exists t") == ast.DropTable("t", if_exists=True)


# --------------------------------------------------------------------------------------------
# INSERT


def test_insert_values_with_columns():
    stmt = one("INSERT INTO t (a, b, c) VALUES (1, 'x', NULL), (-2, 'y''z', TRUE)")
    assert stmt == ast.Insert(
        table="t",
        columns=("a", "b", "c"),
        rows=(
            (ast.Literal("int", 1, "1"), ast.Literal("string", "x", "'x'"), ast.Literal("null", None, "NULL")),
            (ast.Literal("int", -2, "-2"), ast.Literal("string", "y'z", "'y''z'"), ast.Literal("bool", True, "TRUE")),
        ),
    )


def test_insert_values_without_columns():
    stmt = one("insert into t values (1)")
    assert stmt.columns is None and stmt.query is None
    assert stmt.rows == ((ast.Literal("int", 1, "1"),),)


def test_insert_select_keeps_original_text():
    stmt = one("INSERT INTO t (a)   select  x+1 FROM u WHERE y = 'a;b'  ;")
    assert stmt == ast.Insert(table="t", columns=("a",), query="select  x+1 FROM u WHERE y = 'a;b'")


def test_insert_with_cte_and_parenthesised_query():
    assert one("INSERT INTO t WITH c AS (SELECT 1 AS a) SELECT a FROM c").query == ("WITH c AS (SELECT 1 AS a) SELECT a FROM c")
    stmt = one("INSERT INTO t (SELECT * FROM u)")
    assert stmt.columns is None and stmt.query == "(SELECT * FROM u)"


# --------------------------------------------------------------------------------------------
# Literals


@pytest.mark.parametrize(
    "written, expected",
    [
        ("NULL", ast.Literal("null", None, "NULL")),
        ("null", ast.Literal("null", None, "NULL")),
        ("TRUE", ast.Literal("bool", True, "TRUE")),
        ("false", ast.Literal("bool", False, "FALSE")),
        ("42", ast.Literal("int", 42, "42")),
        ("-42", ast.Literal("int", -42, "-42")),
        ("0", ast.Literal("int", 0, "0")),
        ("12345678901234567890123", ast.Literal("int", 12345678901234567890123, "12345678901234567890123")),
        ("1.50", ast.Literal("decimal", "1.50", "1.50")),
        ("-1.50", ast.Literal("decimal", "-1.50", "-1.50")),
        ("1e5", ast.Literal("decimal", "1e5", "1e5")),
        ("-2.5E-3", ast.Literal("decimal", "-2.5E-3", "-2.5E-3")),
        ("'abc'", ast.Literal("string", "abc", "'abc'")),
        ("''", ast.Literal("string", "", "''")),
        ("'it''s'", ast.Literal("string", "it's", "'it''s'")),
        ("'it\\'s'", ast.Literal("string", "it's", "'it\\'s'")),
        ('"dq"', ast.Literal("string", "dq", '"dq"')),
        ("'a;b'", ast.Literal("string", "a;b", "'a;b'")),
        ("DATE '2024-01-01'", ast.Literal("string", "2024-01-01", "DATE '2024-01-01'")),
        ("TIMESTAMP '2024-01-01 10:00:00'", ast.Literal("string", "2024-01-01 10:00:00", "TIMESTAMP '2024-01-01 10:00:00'")),
    ],
)
def test_literal_kinds(written, expected):
    assert one(f"INSERT INTO t VALUES ({written})").rows == ((expected,),)
    assert one(f"CREATE TABLE t (c STRING DEFAULT {written})").columns[0].default == expected
    assert alter_clause(f"ALTER COLUMN c SET DEFAULT {written}") == ast.SetDefault("c", expected)


# --------------------------------------------------------------------------------------------
# SELECT / views / DESCRIBE


def test_select_keeps_text_and_lists_tables_in_order():
    stmt = one("SELECT a, b FROM t2 JOIN t1 ON t2.id = t1.id JOIN t2 AS again ON 1 = 1")
    assert stmt == ast.Select(sql="SELECT a, b FROM t2 JOIN t1 ON t2.id = t1.id JOIN t2 AS again ON 1 = 1", tables=("t2", "t1"))


def test_select_without_tables():
    assert one("SELECT 1 + 1") == ast.Select(sql="SELECT 1 + 1", tables=())


def test_select_tables_exclude_ctes():
    stmt = one(
        "WITH recent AS (SELECT * FROM orders WHERE d > '2024'), big AS (SELECT * FROM recent JOIN users) "
        "SELECT * FROM big JOIN items ON 1 = 1"
    )
    assert stmt.tables == ("orders", "users", "items")
    assert stmt.sql.startswith("WITH recent AS")


def test_select_tables_in_subqueries_and_set_operations():
    stmt = one(
        "SELECT (SELECT max(x) FROM s) AS m FROM (SELECT * FROM a) sub "
        "WHERE EXISTS (SELECT 1 FROM b WHERE b.k = sub.k) AND sub.k IN (SELECT k FROM c) "
        "UNION ALL SELECT 1, 2 FROM d"
    )
    assert stmt.tables == ("s", "a", "b", "c", "d")


def test_select_table_names_dedup_case_insensitively():
    assert one("SELECT * FROM Users u JOIN USERS v ON u.id = v.id").tables == ("Users",)


def test_cte_name_shadowing_a_table_inside_its_own_body():
    # A non-recursive CTE's body reads the catalog table of the same name.
    assert one("WITH t AS (SELECT * FROM t) SELECT * FROM t").tables == ("t",)


def test_nested_cte_and_table_valued_function():
    stmt = one("SELECT * FROM (WITH x AS (SELECT 1 AS a) SELECT * FROM x) q JOIN range(10) r JOIN y")
    assert stmt.tables == ("y",)


def test_create_view():
    stmt = one("CREATE VIEW v AS WITH c AS (SELECT * FROM t) SELECT * FROM c JOIN u ON c.a = u.a;")
    assert stmt == ast.CreateView(name="v", query="WITH c AS (SELECT * FROM t) SELECT * FROM c JOIN u ON c.a = u.a", tables=("t", "u"))


def test_drop_view():
    assert one("DROP VIEW v") == ast.DropView("v", if_exists=False)
    assert one("DROP VIEW IF EXISTS v") == ast.DropView("v", if_exists=True)


def test_describe():
    assert one("DESCRIBE t") == ast.Describe("t")
    assert one("desc `t`") == ast.Describe("t")


# --------------------------------------------------------------------------------------------
# ALTER TABLE


def test_add_column_with_everything():
    clause = alter_clause("ADD COLUMN c DECIMAL(10,2) NOT NULL DEFAULT -1.50 COMMENT 'price' AFTER b")
    assert clause == ast.AddColumn(
        ast.ColumnDef(
            "c",
            "DECIMAL(10,2)",
            nullable=False,
            default=ast.Literal("decimal", "-1.50", "-1.50"),
            comment="price",
            position=ast.Position(after="b"),
        )
    )


def test_add_column_first_and_plain():
    first = ast.Position(first=True)
    assert alter_clause("ADD COLUMN c INT FIRST") == ast.AddColumn(ast.ColumnDef("c", "INT", position=first))
    assert alter_clause("add column c int") == ast.AddColumn(ast.ColumnDef("c", "INT"))


def test_add_columns_list():
    assert alter_clause("ADD COLUMN (a INT NULL, b VARCHAR(5) DEFAULT 'x')") == ast.AddColumns(
        (
            ast.ColumnDef("a", "INT", nullable=True),
            ast.ColumnDef("b", "VARCHAR(5)", default=ast.Literal("string", "x", "'x'")),
        )
    )


def test_drop_column():
    assert alter_clause("DROP COLUMN c") == ast.DropColumn("c")


def test_modify_column_keeps_unstated_attributes_as_none():
    assert alter_clause("MODIFY COLUMN c BIGINT") == ast.ModifyColumn(ast.ColumnDef("c", "BIGINT"))
    assert alter_clause("MODIFY COLUMN c VARCHAR(50) NULL COMMENT 'n' AFTER a") == ast.ModifyColumn(
        ast.ColumnDef("c", "VARCHAR(50)", nullable=True, comment="n", position=ast.Position(after="a"))
    )


def test_rename_column_with_and_without_to():
    assert alter_clause("RENAME COLUMN a TO b") == ast.RenameColumn("a", "b")
    assert alter_clause("RENAME COLUMN a b") == ast.RenameColumn("a", "b")


def test_set_and_drop_default():
    assert alter_clause("ALTER COLUMN c SET DEFAULT 'z'") == ast.SetDefault("c", ast.Literal("string", "z", "'z'"))
    assert alter_clause("ALTER COLUMN c SET DEFAULT NULL") == ast.SetDefault("c", ast.Literal("null", None, "NULL"))
    assert alter_clause("ALTER COLUMN c DROP DEFAULT") == ast.DropDefault("c")


def test_order_by_and_distributed_by():
    assert alter_clause("ORDER BY (b, a)") == ast.OrderBy(("b", "a"))
    assert alter_clause("DISTRIBUTED BY HASH(a, b) BUCKETS 16") == ast.DistributeBy(("a", "b"), 16)


def test_alter_table_several_clauses_and_properties():
    sql = "ALTER TABLE t ADD COLUMN c INT, DROP COLUMN d, ORDER BY (a)\n  PROPERTIES (\"Timeout\" = \"3600\", 'on_cast_error' = 'null')"
    stmt = one(sql + ";")
    assert stmt == ast.AlterTable(
        table="t",
        clauses=(ast.AddColumn(ast.ColumnDef("c", "INT")), ast.DropColumn("d"), ast.OrderBy(("a",))),
        properties={"timeout": "3600", "on_cast_error": "null"},
        explain=False,
        sql=sql,
    )


def test_explain_alter_table():
    stmt = one("EXPLAIN ALTER TABLE t MODIFY COLUMN c BIGINT")
    assert stmt == ast.AlterTable(
        table="t", clauses=(ast.ModifyColumn(ast.ColumnDef("c", "BIGINT")),), explain=True, sql="ALTER TABLE t MODIFY COLUMN c BIGINT"
    )


# --------------------------------------------------------------------------------------------
# Job and history statements


def test_show_cancel_resume_and_versions():
    assert one("SHOW ALTER TABLE COLUMN") == ast.ShowAlter(None)
    assert one("show alter table column from t") == ast.ShowAlter("t")
    assert one("CANCEL ALTER TABLE COLUMN FROM t") == ast.CancelAlter("t")
    assert one("RESUME ALTER TABLE COLUMN FROM t") == ast.ResumeAlter("t")
    assert one("SHOW SCHEMA VERSIONS FROM t") == ast.ShowSchemaVersions("t")


# --------------------------------------------------------------------------------------------
# Splitting


def test_splitting_respects_strings_and_comments():
    statements = parse_statements(
        "INSERT INTO t VALUES ('a;b', \"c;d\", 'e\\';f');\n-- a comment; with a semicolon\nSELECT ';' AS x /* ; */ FROM t;;\nDROP TABLE t"
    )
    assert [type(s) for s in statements] == [ast.Insert, ast.Select, ast.DropTable]
    assert [lit.value for lit in statements[0].rows[0]] == ["a;b", "c;d", "e';f"]
    assert statements[1].sql == "SELECT ';' AS x /* ; */ FROM t"


@pytest.mark.parametrize("text", ["", "   ", ";", " ; ;\n;", "-- only a comment", "/* c */ ; -- x"])
def test_empty_input_gives_no_statements(text):
    assert parse_statements(text) == []


def test_trailing_semicolon_is_optional():
    assert parse_statements("DESC t;") == parse_statements("DESC t") == [ast.Describe("t")]


def test_alter_sql_is_the_original_text_of_each_statement():
    first, second = parse_statements("alter table a drop column x ;\n ALTER   TABLE b DROP COLUMN y")
    assert first.sql == "alter table a drop column x"
    assert second.sql == "ALTER   TABLE b DROP COLUMN y"


# --------------------------------------------------------------------------------------------
# Bad input: a SqlError with one helpful line


@pytest.mark.parametrize(
    "sql, fragments",
    [
        ("CREATE TABLE t (a FOO)", ["unknown type FOO for column a"]),
        ("CREATE TABLE t (a ARRAY<INT>)", ["unknown type ARRAY for column a"]),
        ("CREATE TABLE t (a INT) GARBAGE", ["'GARBAGE'", "end of statement"]),
        ("DROP TABLE t extra", ["'extra'", "end of statement"]),
        ("DESCRIBE t t", ["near 't'"]),
        ("SHOW SCHEMA VERSIONS FROM t garbage", ["'garbage'"]),
        ("ALTER TABLE t DISTRIBUTED BY HASH(a) BUCKETS", ["BUCKETS", "end of statement"]),
        ("ALTER TABLE t DISTRIBUTED BY HASH(a)", ["BUCKETS"]),
        ("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 0", ["positive integer", "'0'"]),
        ("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS -3", ["positive integer"]),
        ("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 2.5", ["positive integer", "'2.5'"]),
        ("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS AUTO", ["positive integer", "'AUTO'"]),
        ("CREATE TABLE `x-y` (a INT)", ["invalid name 'x-y'", "[A-Za-z_][A-Za-z0-9_]*", "128"]),
        ("CREATE TABLE t (`my col` INT)", ["invalid name 'my col'"]),
        ("CREATE TABLE t (" + "a" * 129 + " INT)", ["invalid name", "128 characters"]),
        ("ALTER TABLE t RENAME COLUMN a TO `b.c`", ["invalid name 'b.c'"]),
        ("ALTER TABLE t ADD COLUMN c INT AFTER `1x`", ["invalid name '1x'"]),
        ("DROP VIEW `v v`", ["invalid name 'v v'"]),
        ("SELECT * FROM `a-b`", ["invalid name 'a-b'"]),
        ("CREATE TABLE db.t (a INT)", ["qualified", "'db.t'"]),
        ("DROP TABLE db.t", ["qualified", "'db.t'"]),
        ("INSERT INTO db.t VALUES (1)", ["qualified", "'db.t'"]),
        ("SELECT * FROM db.t", ["qualified", "db.t"]),
        ("CREATE VIEW v AS SELECT * FROM parquet.`/tmp/data`", ["qualified"]),
        ("ALTER TABLE t ORDER BY (t.a)", ["qualified", "'t.a'"]),
        ("INSERT INTO t VALUES (now())", ["INSERT ... VALUES accepts literals only; use INSERT ... SELECT for expressions", "'now'"]),
        ("INSERT INTO t VALUES (1 + 2)", ["literals only", "'+'"]),
        ("INSERT INTO t VALUES (a)", ["literals only", "'a'"]),
        ("INSERT INTO t VALUES (CAST(1 AS INT))", ["literals only"]),
        ("INSERT INTO t VALUES (-x)", ["literals only"]),
        ("INSERT INTO t VALUES (1), (1, 2)", ["different numbers of values"]),
        ("INSERT INTO t (a, b) VALUES (1)", ["2 columns", "1 values"]),
        ("INSERT INTO t VALUES", ["'('", "end of statement"]),
        ("INSERT INTO t VALUES ()", ["literals only"]),
        ("INSERT t VALUES (1)", ["unsupported statement: INSERT t VALUES"]),
        ("CREATE TABLE t (a INT DEFAULT now())", ["literals only", "'now'"]),
        ("CREATE TABLE t (a INT DEFAULT 1 + 1)", ["literals only", "'+'"]),
        ("ALTER TABLE t ALTER COLUMN a SET DEFAULT b", ["literals only", "'b'"]),
        ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 'x' || 'y'", ["literals only", "'||'"]),
        ("ALTER TABLE t ALTER COLUMN a SET DEFAULT", ["literals only"]),
        ("UPDATE t SET a = 1", ["unsupported statement: UPDATE t SET"]),
        ("DELETE FROM t", ["unsupported statement: DELETE FROM t"]),
        ("GRANT ALL ON t TO u", ["unsupported statement: GRANT"]),
        ("CREATE DATABASE d", ["unsupported statement: CREATE DATABASE d"]),
        ("SHOW TABLES", ["unsupported statement: SHOW TABLES"]),
        ("EXPLAIN DROP TABLE t", ["'DROP'", "ALTER TABLE or a SELECT (only these can be explained)"]),
        ("ALTER TABLE t ADD COLUMNN c INT", ["'COLUMNN'", "ALTER TABLE", "COLUMN"]),
        ("ALTER TABLE t CHANGE COLUMN a b", ["'CHANGE'", "ADD COLUMN"]),
        ("ALTER TABLE t", ["end of statement", "ADD COLUMN"]),
        ("ALTER TABLE t ADD COLUMN c INT,", ["end of statement"]),
        ("ALTER TABLE t PROPERTIES ('a' = 'b')", ["'PROPERTIES'"]),
        ("ALTER TABLE t DROP COLUMN a PROPERTIES ('x' = '1', 'X' = '2')", ['"X" given twice']),
        ("ALTER TABLE t DROP COLUMN a PROPERTIES (x = '1')", ["quoted property name", "'x'"]),
        ("ALTER TABLE t DROP COLUMN a PROPERTIES ('x' = 1)", ["quoted value", "'1'"]),
        ("ALTER TABLE t DROP COLUMN a PROPERTIES ('x' = '1') DROP COLUMN b", ["'DROP'", "end of statement"]),
        ("ALTER TABLE t ALTER COLUMN a SET b", ["SET DEFAULT or DROP DEFAULT"]),
        ("ALTER TABLE t ADD COLUMN (a INT AFTER b)", ["FIRST / AFTER", "column a"]),
        ("CREATE TABLE t (a INT FIRST)", ["FIRST / AFTER", "column a"]),
        ("ALTER TABLE t ADD COLUMN c INT DEFAULT 1 DEFAULT 2", ["DEFAULT given twice"]),
        ("ALTER TABLE t ADD COLUMN c INT NULL NOT NULL", ["NULL / NOT NULL given twice"]),
        ("ALTER TABLE t ADD COLUMN c INT COMMENT c", ["quoted comment"]),
        ("ALTER TABLE t ORDER BY a", ["'('", "'a'"]),
        ("ALTER TABLE t ORDER BY ()", ["column name", "')'"]),
        ("CREATE TABLE t ()", ["column definition", "')'"]),
        ("CREATE TABLE t (PRIMARY KEY (a))", ["defines no columns"]),
        ("CREATE TABLE t (a INT, PRIMARY KEY (a), PRIMARY KEY (a))", ["PRIMARY KEY given twice"]),
        ("CREATE TABLE t (a INT) ORDER BY (a) ORDER BY (a)", ["ORDER BY given twice"]),
        ("CREATE TABLE t (a INT(11))", ["INT", "takes no parameters"]),
        ("CREATE TABLE t (a DECIMAL(10,2,1))", ["'1'", "DECIMAL"]),
        ("CREATE TABLE t (a VARCHAR(x))", ["integer", "'x'"]),
        ("CREATE TABLE t (a)", ["a type for column a"]),
        ("CREATE TABLE t (a INT", ["end of statement"]),
        ("CREATE VIEW v SELECT 1", ["AS"]),
        ("CREATE VIEW v AS DROP TABLE t", ["SELECT query"]),
        ("CANCEL ALTER TABLE t", ["'t'", "ALTER TABLE COLUMN FROM"]),
        ("RESUME ALTER TABLE COLUMN t", ["'t'"]),
        ("SELECT 'abc", ["unterminated", "line 1, column 8"]),
        ("SELECT 1;\nINSERT INTO t VALUES ('x)", ["unterminated", "line 2"]),
        ("DESC `t", ["unterminated"]),
        ("SELECT * FROM t /* never closed", ["unterminated"]),
    ],
)
def test_bad_input_gives_one_clear_line(sql, fragments):
    message = error(sql)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("sql", ["SELECT * FROM t garbage garbage", "SELECT 1 SELECT 2", "SELECT corr(DISTINCT x, y) FROM t"])
def test_a_query_sqlglot_cannot_read_is_left_to_spark_as_written(sql):
    """sqlglot's parser does not read all of Spark's SQL: such a query is not refused here but
    handed to Spark, which runs it or words its own error; its words are the candidate tables."""
    stmt = one(sql)
    assert stmt == ast.Select(sql=sql, tables=stmt.tables, unparsed=True)


@pytest.mark.parametrize("query", ["SELECT * FROM t garbage garbage", "SELECT * FROM", "SELECT corr(DISTINCT x, y) FROM t"])
def test_a_view_or_an_insert_over_a_query_sqlglot_cannot_read_is_left_to_spark(query):
    """The session asks Spark's parser which tables such a view reads (or for its error line)."""
    view = one(f"CREATE VIEW v AS {query}")
    assert view == ast.CreateView(name="v", query=query, tables=view.tables, unparsed=True)
    assert one(f"INSERT INTO t {query}") == ast.Insert(table="t", columns=None, query=query)


def test_error_in_a_later_statement_reports_that_statement():
    assert "unknown type FOO" in error("DROP TABLE a; CREATE TABLE b (c FOO)")


def test_sqlerror_is_a_user_error():
    from alterflow.errors import UserError

    assert issubclass(SqlError, UserError)


def test_split_statements_keeps_each_statement_text_without_parsing():
    assert split_statements("CREATE TABLE t (a INT); SELECT ';' FROM t;; not sql at all") == [
        "CREATE TABLE t (a INT)",
        "SELECT ';' FROM t",
        "not sql at all",
    ]
    assert split_statements(" ; -- nothing\n ;") == []


def test_explain_select_and_set_engine_parse():
    assert parse_statements("EXPLAIN WITH c AS (SELECT a FROM t) SELECT * FROM c JOIN u ON c.a = u.a") == [
        ast.ExplainSelect("WITH c AS (SELECT a FROM t) SELECT * FROM c JOIN u ON c.a = u.a", ("t", "u"))
    ]
    assert parse_statements("SET engine = spark; set ENGINE = 'Local'") == [
        ast.SetOption("engine", "spark"),
        ast.SetOption("engine", "local"),
    ]
