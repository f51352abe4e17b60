"""The in-order planner of pending statements: each planned against the schema the ones before
it leave, changing nothing (both catalogs)."""

from __future__ import annotations

from alterflow.migrate.migration_files import read_directory
from alterflow.migrate.plan import DATA, HEAVY, LIGHT, REJECTED, plan_pending
from tests.migrate.conftest import ORDERS


def _plans(session, migrations):
    return plan_pending(session.catalog, read_directory(migrations.path), session.warehouse)


def test_a_later_statement_sees_what_the_earlier_pending_ones_did(catalog_session, migrations):
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 2, 'x');")
    migrations.write("V2__rename.sql", "ALTER TABLE orders RENAME COLUMN note TO remark;\nALTER TABLE orders ADD COLUMN region VARCHAR(8);")
    migrations.write(
        "V3__retype.sql",
        'ALTER TABLE orders MODIFY COLUMN remark VARCHAR(40), MODIFY COLUMN region VARCHAR(16) PROPERTIES ("expected_version" = "3");\n'
        "ALTER TABLE orders MODIFY COLUMN amount VARCHAR(10);",
    )
    plans = _plans(catalog_session, migrations)
    assert [p.kind for p in plans] == [LIGHT, DATA, LIGHT, LIGHT, LIGHT, HEAVY]
    assert plans[4].guarded and not plans[5].guarded
    assert plans[4].alter.new.version == 4 and plans[5].alter.new.version == 5
    # nothing changed: the table does not exist yet
    assert catalog_session.catalog.object_kind("orders") is None


def test_rejections_in_order(catalog_session, migrations):
    list(catalog_session.run(ORDERS))
    migrations.write(
        "V1__a.sql",
        "ALTER TABLE orders DROP COLUMN note;\n"
        "ALTER TABLE orders MODIFY COLUMN note INT;\n"  # dropped just before
        'ALTER TABLE orders ADD COLUMN c INT PROPERTIES ("expected_version" = "1");\n'  # it is 2 by then
        "CREATE TABLE orders (a INT);\n"
        "SELECT * FROM orders;\n"
        "EXPLAIN ALTER TABLE orders ADD COLUMN d INT;\n"
        'ALTER TABLE orders ADD COLUMN e INT PROPERTIES ("postpone_swap" = "true");\n'
        "DROP TABLE orders;\n"
        "ALTER TABLE orders ADD COLUMN f INT;\n"
        "INSERT INTO nowhere VALUES (1);",
    )
    plans = _plans(catalog_session, migrations)
    assert [p.kind for p in plans] == [LIGHT, *[REJECTED] * 6, LIGHT, REJECTED, REJECTED]
    reasons = [p.reason for p in plans]
    assert "note" in reasons[1]
    assert "expected_version 1 but the current version is 2" in reasons[2]
    assert "already exists" in reasons[3]
    assert "Select is not allowed in a migration" in reasons[4]
    assert "EXPLAIN is not allowed" in reasons[5]
    assert "postpone_swap" in reasons[6]
    assert "unknown table orders" in reasons[8]
    assert catalog_session.catalog.current_schema("orders")[1].version == 1  # planning changed nothing


def test_views_created_by_pending_statements_protect_their_columns(catalog_session, migrations):
    list(catalog_session.run(ORDERS))
    migrations.write(
        "V1__v.sql",
        "CREATE VIEW big AS SELECT id, amount FROM orders WHERE amount > 10;\n"
        "ALTER TABLE orders DROP COLUMN amount;\n"
        "DROP TABLE orders;\n"
        "DROP VIEW big;\n"
        "DROP TABLE orders;",
    )
    plans = _plans(catalog_session, migrations)
    assert [p.kind for p in plans] == [LIGHT, REJECTED, REJECTED, LIGHT, LIGHT]
    assert "big" in plans[1].reason and "view big uses it" in plans[2].reason
    assert plans[4].dropped_table


def test_a_view_that_reads_no_named_column_still_holds_its_table(catalog_session, migrations):
    list(catalog_session.run(ORDERS + "CREATE VIEW counted AS SELECT COUNT(*) AS n FROM orders;"))
    migrations.write("V1__v.sql", "CREATE VIEW counted_too AS SELECT COUNT(*) AS n FROM orders;\nDROP TABLE orders;")
    plans = _plans(catalog_session, migrations)
    assert [p.kind for p in plans] == [LIGHT, REJECTED]
    assert plans[1].reason == "cannot drop table orders: view counted, counted_too uses it"


def test_heavy_rows_come_from_today_table(catalog_session, migrations):
    list(catalog_session.run(ORDERS + "INSERT INTO orders VALUES (1, 2, '3'), (2, 3, 'x');"))
    migrations.write("V1__a.sql", "ALTER TABLE orders MODIFY COLUMN note INT;")
    (plan,) = _plans(catalog_session, migrations)
    assert plan.kind == HEAVY and plan.rows == 2 and plan.table_id is not None


def test_a_view_alterflow_s_parser_cannot_read_is_planned_with_its_tables_whole(catalog_session, migrations):
    """sqlglot cannot read corr(DISTINCT ...): the plan is light, says Spark parses the query, and
    every column of each table the query's words name counts as read."""
    list(catalog_session.run(ORDERS))
    migrations.write(
        "V1__v.sql", "CREATE VIEW c AS SELECT corr(DISTINCT id, amount) AS r FROM orders;\nALTER TABLE orders DROP COLUMN note;"
    )
    plans = _plans(catalog_session, migrations)
    assert [p.kind for p in plans] == [LIGHT, REJECTED]
    assert "Spark parses it when it is created" in plans[0].reason
    assert plans[1].reason.endswith("cannot drop column note: it is used by view c"), plans[1].reason
