"""How `migrate lint`'s in-order plan reads the catalog (`alterflow.migrate.plan`): all the tables the
pending statements name in one batch (`Catalog.alter_contexts`), which reads what `alter_context`
reads table by table, and a table's size only for a rewrite; so the number of catalog queries does
not grow with the number of statements. On SQLite and PostgreSQL."""

from __future__ import annotations

import pathlib

from sqlalchemy import event

from alterflow.catalog.catalog import ViewDependency
from alterflow.catalog.schema import name_key
from alterflow.migrate.migration_files import read_directory
from alterflow.migrate.plan import HEAVY, LIGHT, plan_pending
from tests.support.heavy_jobs import start
from tests.support.statements import sql

TABLE = "CREATE TABLE {name} (id INT NOT NULL, v VARCHAR(20), n INT) DISTRIBUTED BY HASH(id) BUCKETS 2"


def test_alter_contexts_reads_what_alter_context_reads(catalog_session):
    catalog = catalog_session.catalog
    for name in ("Plain", "busy", "viewed"):
        sql(catalog_session, TABLE.format(name=name))
    sql(catalog_session, "INSERT INTO busy VALUES (1, '1', 1)")
    start(catalog_session, "ALTER TABLE busy MODIFY COLUMN v INT")  # an unfinished job (PENDING)
    viewed = catalog.table("viewed")
    catalog.create_view("w1", "SELECT id, n FROM viewed", [ViewDependency("viewed", viewed.id, 1, (1, 3))])
    catalog.create_view("w2", "SELECT n FROM viewed", [ViewDependency("viewed", viewed.id, 1, (3,))])
    sql(catalog_session, "ALTER TABLE Plain ADD COLUMN a INT")  # current version 2

    contexts = catalog.alter_contexts(["plain", "BUSY", "viewed", "missing", "Plain"])
    assert set(contexts) == {"plain", "busy", "viewed"}
    for name in ("Plain", "busy", "viewed"):
        assert contexts[name_key(name)] == catalog.alter_context(name)
    assert contexts["plain"].current.version == 2 and contexts["plain"].table.name == "Plain"
    assert contexts["busy"].active_job is not None and contexts["busy"].active_job.state == "PENDING"
    assert contexts["viewed"].view_uses == {1: ("w1",), 3: ("w1", "w2")}
    assert catalog.alter_contexts([]) == {}


def _queries(catalog, action) -> int:
    count = 0

    def counted(*_args):
        nonlocal count
        count += 1

    event.listen(catalog.engine, "before_cursor_execute", counted)
    try:
        action()
    finally:
        event.remove(catalog.engine, "before_cursor_execute", counted)
    return count


def _plan(catalog_session, directory: pathlib.Path, tables: int, heavy: bool) -> tuple[int, list]:
    directory.mkdir()
    statements = [f"ALTER TABLE t{i} ADD COLUMN a INT" for i in range(tables)]
    statements += ["ALTER TABLE t0 RENAME COLUMN a TO b", "ALTER TABLE nowhere ADD COLUMN a INT", TABLE.format(name="fresh")]
    if heavy:
        statements.append("ALTER TABLE t1 MODIFY COLUMN v INT")
    (directory / "V1__columns.sql").write_text("".join(f"{s};\n" for s in statements), encoding="utf-8")
    files = read_directory(directory)
    plans: list = []
    count = _queries(catalog_session.catalog, lambda: plans.extend(plan_pending(catalog_session.catalog, files, catalog_session.warehouse)))
    return count, plans


def test_the_plan_reads_the_catalog_a_fixed_number_of_times(catalog_session, tmp_path):
    for i in range(30):
        sql(catalog_session, TABLE.format(name=f"t{i}"))
    few, plans = _plan(catalog_session, tmp_path / "few", 3, heavy=False)
    assert [p.kind for p in plans] == [LIGHT] * 4 + ["REJECTED", LIGHT]
    assert "unknown table nowhere" in plans[4].reason
    many, plans = _plan(catalog_session, tmp_path / "many", 30, heavy=False)
    assert [p.kind for p in plans] == [LIGHT] * 31 + ["REJECTED", LIGHT]
    assert many == few  # not one read per table
    # A rewrite reads the size of the table it rewrites, and nothing per other table.
    few_and_rewrite, plans = _plan(catalog_session, tmp_path / "few-rewrite", 3, heavy=True)
    assert plans[-1].kind == HEAVY and plans[-1].table == "t1"
    many_and_rewrite, plans = _plan(catalog_session, tmp_path / "many-rewrite", 30, heavy=True)
    assert plans[-1].kind == HEAVY and plans[-1].rows == 0
    assert many_and_rewrite == few_and_rewrite > few
