"""The versioned catalog, on SQLite and on PostgreSQL (the `catalog_url` fixture runs each test on both)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from sqlalchemy import inspect

from alterflow.catalog.catalog import Catalog, NewFile, ViewDependency
from alterflow.catalog.catalog_errors import ConcurrentChange, DependentObjects, NameInUse, TransactionStateError, UnknownObject
from alterflow.catalog.database import current_revision, head_revision, open_engine, upgrade
from alterflow.catalog.records import AlterProperties, JobSpec
from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.values.types import parse_type


def version_one(table_id: int) -> tuple[SchemaVersion, int]:
    columns = (
        Column(1, "k", parse_type("INT"), nullable=False),
        Column(2, "v", parse_type("VARCHAR(10)"), write_default="x", initial_default="x"),
    )
    return SchemaVersion(table_id, 1, columns, primary_key=(1,), distributed_by=(1,), buckets=2), 3


def add_column(version: SchemaVersion, column: Column) -> SchemaVersion:
    return replace(version, version=version.version + 1, columns=version.columns + (column,), statement="ALTER")


def test_migrations_create_every_table_and_are_idempotent(catalog_url):
    engine = open_engine(catalog_url)
    names = set(inspect(engine).get_table_names())
    assert {
        "af_tables",
        "af_schema_versions",
        "af_indexes",
        "af_tablets",
        "af_transactions",
        "af_data_files",
        "af_alter_jobs",
        "af_views",
        "af_view_dependencies",
        "alembic_version",
    } <= names
    assert current_revision(engine) == head_revision()
    upgrade(engine)  # nothing to do the second time
    assert current_revision(engine) == head_revision()


def test_create_table_records_version_one_and_an_active_index(catalog):
    info = catalog.create_table("Orders", version_one, "CREATE TABLE Orders ...")
    assert info.current_version == 1 and info.next_column_id == 3
    same, version = catalog.current_schema("orders")  # names are case-insensitive
    assert same.id == info.id
    assert [c.name for c in version.columns] == ["k", "v"]
    assert version.primary_key == (1,) and version.buckets == 2
    assert version.column("V").write_default == "x"
    assert catalog.schema_versions(info.id)[0].statement == "CREATE TABLE Orders ..."


def test_duplicate_table_name_is_rejected_and_if_not_exists_skips(catalog):
    catalog.create_table("t", version_one, "c")
    with pytest.raises(NameInUse, match="table T already exists"):
        catalog.create_table("T", version_one, "c")
    assert catalog.create_table("t", version_one, "c", if_not_exists=True) is None
    assert len(catalog.tables()) == 1


def test_table_ids_are_never_reused_after_drop(catalog):
    first = catalog.create_table("t", version_one, "c")
    catalog.drop_table("t")
    with pytest.raises(UnknownObject, match="unknown table t"):
        catalog.table("t")
    second = catalog.create_table("t", version_one, "c")
    assert second.id > first.id
    assert catalog.drop_table("missing", if_exists=True) is None


def test_light_alter_commits_one_new_version_and_a_finished_job(catalog):
    info = catalog.create_table("t", version_one, "c")
    _, v1 = catalog.current_schema("t")
    v2 = add_column(v1, Column(3, "n", parse_type("INT")))
    job = catalog.commit_light_alter(
        JobSpec("req-1", info.id, "t", 1, v2, 4, AlterProperties(timeout=86400), 86400), ["validate", "commit"]
    )
    assert (job.kind, job.state, job.from_version, job.to_version) == ("LIGHT", "FINISHED", 1, 2)
    assert job.steps == ("validate", "commit")
    table, current = catalog.current_schema("t")
    assert (table.current_version, table.next_column_id) == (2, 4)
    assert [c.name for c in current.columns] == ["k", "v", "n"]
    assert [v.version for v in catalog.schema_versions(info.id)] == [1, 2]
    # Retrying the same request returns the same job and adds nothing.
    again = catalog.commit_light_alter(JobSpec("req-1", info.id, "t", 1, v2, 4, AlterProperties(), 86400), [])
    assert again.id == job.id
    assert [v.version for v in catalog.schema_versions(info.id)] == [1, 2]


def test_a_stale_version_cannot_commit(catalog):
    info = catalog.create_table("t", version_one, "c")
    _, v1 = catalog.current_schema("t")
    catalog.commit_light_alter(
        JobSpec("a", info.id, "t", 1, add_column(v1, Column(3, "n", parse_type("INT"))), 4, AlterProperties(), 1), []
    )
    with pytest.raises(ConcurrentChange, match="version 1 is no longer current"):
        catalog.commit_light_alter(
            JobSpec("b", info.id, "t", 1, add_column(v1, Column(3, "m", parse_type("INT"))), 4, AlterProperties(), 1), []
        )
    _, current = catalog.current_schema("t")
    assert [c.name for c in current.columns] == ["k", "v", "n"]
    assert len(catalog.jobs(info.id)) == 1


def test_two_concurrent_alters_never_both_commit(catalog_url):
    """Two threads, each with its own connection pool, commit ALTERs planned against version 1 at once."""
    setup = Catalog(catalog_url)
    info = setup.create_table("t", version_one, "c")
    _, v1 = setup.current_schema("t")
    for round_number in range(5):
        base = setup.table("t").current_version
        _, current = setup.current_schema("t")
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def attempt(name: str, round_number=round_number, base=base, current=current, barrier=barrier, outcomes=outcomes) -> None:
            from alterflow.catalog.database import make_engine

            mine = Catalog(engine=make_engine(catalog_url))  # a separate engine: separate connections
            new = add_column(current, Column(100 + round_number * 2 + len(name), f"{name}{round_number}", parse_type("INT")))
            barrier.wait()
            try:
                mine.commit_light_alter(JobSpec(f"{name}-{round_number}", info.id, "t", base, new, 200, AlterProperties(), 1), [])
                outcomes.append("committed")
            except ConcurrentChange:
                outcomes.append("refused")
            finally:
                mine.engine.dispose()

        threads = [threading.Thread(target=attempt, args=(n,)) for n in ("a", "bb")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["committed", "refused"]
        assert setup.table("t").current_version == base + 1
    assert [v.version for v in setup.schema_versions(info.id)] == list(range(1, 7))


def test_transactions_make_files_visible_only_at_commit(catalog):
    info = catalog.create_table("t", version_one, "c")
    tablets = catalog.ensure_tablets(info.current_index_id, [("[]", 0), ("[]", 1)])
    assert catalog.ensure_tablets(info.current_index_id, [("[]", 1)]) == {("[]", 1): tablets[("[]", 1)]}
    t1 = catalog.begin_transaction(info.id, "load 1", 60)
    t2 = catalog.begin_transaction(info.id, "load 2", 60)
    assert t2 > t1
    catalog.register_files(t1, [NewFile(tablets[("[]", 0)], 1, "t1/a.parquet", 10, 0)])
    catalog.register_files(t2, [NewFile(tablets[("[]", 1)], 1, "t1/b.parquet", 5, 0)])
    assert catalog.snapshot("t").files == ()
    seq = catalog.commit_transaction(t1, {"t1/a.parquet": 1234})
    snapshot = catalog.snapshot("t")
    assert [(f.path, f.row_count, f.byte_size, f.commit_seq) for f in snapshot.files] == [("t1/a.parquet", 10, 1234, seq)]
    assert catalog.abort_transaction(t2, "test") == ["t1/b.parquet"]
    assert [f.path for f in catalog.snapshot("t").files] == ["t1/a.parquet"]
    assert catalog.table_stats(info.id) == (10, 1234)
    with pytest.raises(TransactionStateError, match="cannot commit: it is ABORTED"):
        catalog.commit_transaction(t2)
    with pytest.raises(TransactionStateError, match="already committed"):
        catalog.abort_transaction(t1, "late")
    with pytest.raises(TransactionStateError, match=r"^transaction \d+ cannot write files: it is ABORTED \(test\)$"):
        catalog.register_files(t2, [])
    with pytest.raises(TransactionStateError, match="not in PREPARE"):
        catalog.register_files(t1, [])


def test_views_pin_versions_and_protect_what_they_use(catalog):
    info = catalog.create_table("t", version_one, "c")
    catalog.create_view("v", "SELECT k FROM t", [ViewDependency("t", info.id, 1, (1,))])
    view = catalog.view("V")
    assert view.dependencies[0].table_version == 1 and view.dependencies[0].column_ids == (1,)
    catalog.create_view("w", "SELECT * FROM v", [ViewDependency("v", dep_view_id=view.id)])
    assert catalog.view_uses(info.id) == {1: ("v",)}
    assert catalog.object_kind("w") == "view" and catalog.object_kind("t") == "table"
    with pytest.raises(NameInUse):
        catalog.create_view("t", "SELECT 1", [])
    with pytest.raises(NameInUse):
        catalog.create_table("v", version_one, "c")
    with pytest.raises(DependentObjects, match="cannot drop table t: view v uses it"):
        catalog.drop_table("t")
    with pytest.raises(DependentObjects, match="cannot drop view v: view w uses it"):
        catalog.drop_view("v")
    assert catalog.drop_view("w") and catalog.drop_view("v")
    assert catalog.view_uses(info.id) == {}
    assert catalog.drop_table("t").id == info.id


def test_transactions_past_their_timeout_are_aborted(catalog):
    from datetime import timedelta

    from alterflow.catalog.catalog import utcnow

    info = catalog.create_table("t", version_one, "c")
    tablet = catalog.ensure_tablets(info.current_index_id, [("[]", 0)])[("[]", 0)]
    stale = catalog.begin_transaction(info.id, "stale", 1)
    fresh = catalog.begin_transaction(info.id, "fresh", 3600)
    catalog.register_files(stale, [NewFile(tablet, 1, "t1/stale.parquet", 1, 0)])
    assert catalog.abort_expired_transactions(info.id) == []  # not yet past its timeout
    later = utcnow() + timedelta(seconds=5)
    assert catalog.abort_expired_transactions(info.id, now=later) == ["t1/stale.parquet"]
    assert _txn_state(catalog, stale) == "ABORTED"
    assert _txn_state(catalog, fresh) == "PREPARE"
    with pytest.raises(TransactionStateError, match=r"cannot commit: it is ABORTED \(timed out at"):
        catalog.commit_transaction(stale)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_catalog_url(request, tmp_path):
    """A database without alterflow's tables, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'catalog.db'}"
    return request.getfixturevalue("pg_empty_url")


def test_an_older_catalog_is_upgraded_in_place(empty_catalog_url):
    """A catalog created at the first migration gets the later ones (on open for SQLite, by
    `alterflow db upgrade` for PostgreSQL: both call `upgrade`), keeping its rows."""
    catalog_url = empty_catalog_url
    from alembic import command
    from sqlalchemy import text

    from alterflow.catalog.database import alembic_config, make_engine

    engine = make_engine(catalog_url)
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO af_tables (name, name_key, current_version, next_column_id, commit_seq, created_at) "
                "VALUES ('old', 'old', 1, 2, 0, CURRENT_TIMESTAMP)"
            )
        )
    assert current_revision(engine) == "0001"
    upgrade(engine)
    assert current_revision(engine) == head_revision() != "0001"
    assert "af_converted_tablets" in inspect(engine).get_table_names()
    assert "job_id" in {c["name"] for c in inspect(engine).get_columns("af_transactions")}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT name FROM af_tables")).scalar() == "old"
    engine.dispose()


def _txn_state(catalog, txn_id: int) -> str:
    from alterflow.catalog.models import TransactionRow

    with catalog.db_session() as s:
        return s.get(TransactionRow, txn_id).state
