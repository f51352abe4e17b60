"""`migrate apply`, `status`, `baseline`, `repair`: history, drift and refusals (both catalogs).
Kill -9 of a real apply process: test_apply_kill.py."""

from __future__ import annotations

import threading

import pytest

from alterflow.catalog.migration_history import MigrationHistory, MigrationLeaseHeld
from alterflow.errors import UserError
from alterflow.held_leases import new_holder
from alterflow.migrate.apply import MigrationApply, MigrationFailed, MigrationRefused, baseline, new_request_id, repair
from alterflow.migrate.migration_files import read_directory
from alterflow.migrate.status import migration_status
from tests.migrate.conftest import ORDERS


def _apply(session, migrations, to=None, lines=None, lease_s=None):
    return MigrationApply(session, migrations.path, who="tester", on_line=(lines if lines is not None else []).append, lease_s=lease_s).run(
        to=to
    )


def _states(session, migrations):
    return {s.script: s.state for s in migration_status(session.catalog, migrations.path).states}


def _rows(session, table="orders"):
    return sorted(list(session.run(f"SELECT * FROM {table} ORDER BY id"))[-1].rows)


def _write_history(migrations):
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');")
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\nALTER TABLE orders RENAME COLUMN note TO remark;")
    migrations.write("V3__wider.sql", "ALTER TABLE orders MODIFY COLUMN remark VARCHAR(40);")


def test_apply_runs_pending_files_in_order_once(catalog_session, migrations):
    _write_history(migrations)
    lines = []
    result = _apply(catalog_session, migrations, lines=lines)
    assert result.applied == ["V1__orders.sql", "V2__region.sql", "V3__wider.sql"] and result.statements == 5
    assert result.tables == {"orders"}
    assert set(_states(catalog_session, migrations).values()) == {"APPLIED"}
    assert lines[-1] == "V3__wider.sql APPLIED (1 statement(s))"
    again = _apply(catalog_session, migrations)
    assert again.applied == [] and again.statements == 0
    version = catalog_session.catalog.current_schema("orders")[1]
    assert version.version == 4 and [c.name for c in version.columns] == ["id", "amount", "remark", "region"]
    history = MigrationHistory(catalog_session.catalog).migrations()
    made = [(s.table_name, s.schema_version) for m in history for s in m.statements]
    assert made == [("orders", 1), ("orders", None), ("orders", 2), ("orders", 3), ("orders", 4)]
    assert all(m.installed_by == "tester" and m.checksum for m in history)
    assert migration_status(catalog_session.catalog, migrations.path).drift == []


def test_to_stops_after_that_version_and_a_missing_one_is_refused(catalog_session, migrations):
    _write_history(migrations)
    with pytest.raises(MigrationRefused, match="--to 9: no migration file has version 9"):
        _apply(catalog_session, migrations, to="9")
    assert catalog_session.catalog.object_kind("orders") is None
    assert _apply(catalog_session, migrations, to="2").applied == ["V1__orders.sql", "V2__region.sql"]
    assert _states(catalog_session, migrations)["V3__wider.sql"] == "PENDING"


def test_a_rejected_pending_statement_refuses_the_whole_apply(catalog_session, migrations):
    _write_history(migrations)
    migrations.write("V4__bad.sql", "ALTER TABLE orders DROP COLUMN nothere;")
    with pytest.raises(MigrationRefused) as info:
        _apply(catalog_session, migrations)
    assert str(info.value).startswith("migrate apply: V4__bad.sql line 1: ") and "nothing was applied" in str(info.value)
    assert catalog_session.catalog.object_kind("orders") is None
    assert MigrationHistory(catalog_session.catalog).migrations() == []


def test_a_failure_marks_the_file_failed_and_repair_retries_from_it(catalog_session, migrations):
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, '5'), (2, 20, 'b');")
    migrations.write("V2__retype.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN note INT;")
    with pytest.raises(MigrationFailed) as info:
        _apply(catalog_session, migrations)
    assert str(info.value).startswith("V2__retype.sql:2: ALTER TABLE orders: job ") and "(the file is FAILED)" in str(info.value)
    assert _states(catalog_session, migrations) == {"V1__orders.sql": "APPLIED", "V2__retype.sql": "FAILED"}
    with pytest.raises(MigrationRefused, match="V2__retype.sql FAILED: .* run `alterflow migrate repair`"):
        _apply(catalog_session, migrations)
    # fixed: the statement that ran (ADD COLUMN) keeps its text; the failed one changes
    migrations.write(
        "V2__retype.sql",
        'ALTER TABLE orders ADD COLUMN region VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN note INT PROPERTIES ("on_cast_error" = "null");',
    )
    with pytest.raises(MigrationRefused, match="V2__retype.sql was edited since it was failed"):
        _apply(catalog_session, migrations)
    assert repair(catalog_session.catalog, migrations.path) == [
        "V2__retype.sql: FAILED cleared; apply retries it from its failed statement",
        "V2__retype.sql: its current checksum accepted",
    ]
    result = _apply(catalog_session, migrations)
    assert result.applied == ["V2__retype.sql"] and result.statements == 1  # ADD COLUMN did not run again
    assert [c.name for c in catalog_session.catalog.current_schema("orders")[1].columns] == ["id", "amount", "note", "region"]
    jobs = list(catalog_session.run("SHOW ALTER TABLE COLUMN FROM orders"))[-1].rows
    assert [j[7] for j in jobs].count("FINISHED") == 2 and [j[7] for j in jobs].count("CANCELLED") == 1
    assert _rows(catalog_session) == [(1, 10, 5, None), (2, 20, None, None)]


def test_a_done_statement_must_keep_its_text(catalog_session, migrations):
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'x');")
    migrations.write("V2__retype.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN note INT;")
    with pytest.raises(MigrationFailed):
        _apply(catalog_session, migrations)
    migrations.write("V2__retype.sql", "ALTER TABLE orders ADD COLUMN area VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN amount BIGINT;")
    repair(catalog_session.catalog, migrations.path)
    with pytest.raises(MigrationRefused, match="V2__retype.sql statement 1 \\(line 1\\) was already applied with another text"):
        _apply(catalog_session, migrations)


def test_edited_and_deleted_applied_files_block_until_repair(catalog_session, migrations):
    _write_history(migrations)
    _apply(catalog_session, migrations)
    migrations.write("V3__wider.sql", "-- reviewed\nALTER TABLE orders MODIFY COLUMN remark VARCHAR(40);")
    migrations.write("V4__more.sql", "ALTER TABLE orders ADD COLUMN more INT;")
    status = migration_status(catalog_session.catalog, migrations.path)
    assert [(d.kind, d.script) for d in status.drift] == [("edited", "V3__wider.sql")]
    assert status.as_json()["migrations"][2]["checksum_ok"] is False
    with pytest.raises(MigrationRefused, match="V3__wider.sql was edited"):
        _apply(catalog_session, migrations)
    assert repair(catalog_session.catalog, migrations.path) == ["V3__wider.sql: its current checksum accepted"]
    (migrations.path / "V1__orders.sql").unlink()
    assert [d.kind for d in migration_status(catalog_session.catalog, migrations.path).drift] == ["deleted"]
    with pytest.raises(MigrationRefused, match="V1__orders.sql is APPLIED in the history but no longer in the directory"):
        _apply(catalog_session, migrations)
    assert repair(catalog_session.catalog, migrations.path) == [
        "V1__orders.sql: deleted from the directory; marked DELETED in the history (what it did stays)"
    ]
    assert _apply(catalog_session, migrations).applied == ["V4__more.sql"]
    assert _states(catalog_session, migrations)["V1__orders.sql"] == "DELETED"


def test_a_pending_file_below_an_applied_one_is_out_of_order(catalog_session, migrations):
    _write_history(migrations)
    _apply(catalog_session, migrations)
    migrations.write("V2.5__late.sql", "ALTER TABLE orders ADD COLUMN late INT;")
    status = migration_status(catalog_session.catalog, migrations.path)
    assert [(d.kind, d.script) for d in status.drift] == [("out_of_order", "V2.5__late.sql")]
    with pytest.raises(MigrationRefused, match="V2.5__late.sql is pending but a higher version is already applied"):
        _apply(catalog_session, migrations)


def test_changes_made_outside_migrations_are_drift_and_do_not_block(catalog_session, migrations):
    _write_history(migrations)
    _apply(catalog_session, migrations, to="2")
    list(catalog_session.run("ALTER TABLE orders ADD COLUMN typed_at_a_prompt INT"))
    (drift,) = migration_status(catalog_session.catalog, migrations.path).drift
    assert (drift.kind, drift.table, drift.version) == ("outside", "orders", 4)
    assert drift.statement == "ALTER TABLE orders ADD COLUMN typed_at_a_prompt INT" and drift.time
    assert _apply(catalog_session, migrations).applied == ["V3__wider.sql"]


def test_baseline_adopts_an_existing_catalog(catalog_session, migrations):
    list(catalog_session.run(ORDERS))
    _write_history(migrations)
    assert baseline(catalog_session.catalog, migrations.path, "1", who="tester").startswith("baseline at version 1: 1 file(s)")
    states = _states(catalog_session, migrations)
    assert states == {
        "<< baseline >>": "BASELINE",
        "V1__orders.sql": "BELOW_BASELINE",
        "V2__region.sql": "PENDING",
        "V3__wider.sql": "PENDING",
    }
    assert _apply(catalog_session, migrations).applied == ["V2__region.sql", "V3__wider.sql"]
    with pytest.raises(UserError, match="already has migration history"):
        baseline(catalog_session.catalog, migrations.path, "3")


def test_a_statement_left_running_is_found_done_not_run_again(catalog_session, migrations):
    """What a killed apply leaves: statements recorded RUNNING whose effect happened (an ALTER's
    job, a CREATE, an INSERT's transaction) or never did. Real processes: test_apply_kill.py."""
    from alterflow import sql as ast

    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a');\nALTER TABLE orders ADD COLUMN region VARCHAR(8);")
    (file,) = read_directory(migrations.path)
    history = MigrationHistory(catalog_session.catalog)
    migration_id = history.begin_file(file.version, file.description, file.script, file.checksum, "tester")
    for statement in file.statements:  # each ran under its request id; none was recorded DONE
        request_id = new_request_id()
        history.start_statement(migration_id, statement.position, statement.line, statement.text_hash, request_id)
        catalog_session.execute(ast.parse_statements(statement.text)[0], request_id=request_id)
    lines = []
    result = _apply(catalog_session, migrations, lines=lines)
    assert result.applied == ["V1__orders.sql"]
    assert any("CREATE TABLE orders (found done)" in line for line in lines)
    assert any("INSERT INTO orders (found done: its transaction committed)" in line for line in lines)
    assert any("FINISHED, schema version 2 (found done)" in line for line in lines)
    assert _rows(catalog_session) == [(1, 10, "a", None)]
    assert len(list(catalog_session.run("SHOW ALTER TABLE COLUMN FROM orders"))[-1].rows) == 1


def test_one_apply_at_a_time(catalog_session, migrations):
    _write_history(migrations)
    history = MigrationHistory(catalog_session.catalog)
    other = new_holder()
    history.acquire_lease(other, 2.0)
    stop = threading.Event()

    def renew():  # a live apply renews its lease
        while not stop.wait(0.3):
            history.renew_lease(other, 2.0)

    thread = threading.Thread(target=renew)
    thread.start()
    try:
        with pytest.raises(MigrationLeaseHeld, match="another apply is running on this catalog"):
            _apply(catalog_session, migrations)
    finally:
        stop.set()
        thread.join()
    assert catalog_session.catalog.object_kind("orders") is None
    # the same apply, dead: its lease is renewed no more, and is waited out
    assert history.renew_lease(other, 2.0)
    lines = []
    assert len(_apply(catalog_session, migrations, lines=lines).applied) == 3
    assert lines[0].startswith("waiting for the apply lease of ")
    assert history.lease().holder is None  # released at the end


def test_in_the_cli_the_person_running_apply_approves_and_is_told_so(catalog_session, migrations):
    from alterflow.migrate.rules import LintRules

    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a');")
    migrations.write("V2__text.sql", "ALTER TABLE orders MODIFY COLUMN amount VARCHAR(10);")
    lines = []
    MigrationApply(catalog_session, migrations.path, who="tester", on_line=lines.append, approve_rules=LintRules()).run()
    approved = [line for line in lines if " approve " in line]
    assert approved == [
        "V2__text.sql:1 approve rewrite: rewrites the data of orders (0 rows today) into a new index (approved by tester, who runs this apply)"
    ], lines
    assert lines.index(approved[0]) < lines.index("V1__orders.sql:1 CREATE TABLE orders")  # told before anything runs


def test_an_interrupt_that_a_query_turned_into_its_own_error_leaves_the_statement_running(catalog_session, migrations, monkeypatch):
    """A Ctrl-C or SIGTERM that cuts a catalog query reaches the apply as the driver's own error
    (psycopg cancels the query and raises QueryCanceled, the KeyboardInterrupt its context). It is
    the interrupt, not the statement's failure: raised again, the file not FAILED, the statement
    left RUNNING, and the next apply finishes it (as after a kill; CI's SIGTERM test on PostgreSQL
    met it)."""
    from alterflow.catalog.migration_history import RUNNING

    migrations.write("V1__orders.sql", ORDERS)
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);")
    _apply(catalog_session, migrations, to="1")
    real_execute = MigrationApply._execute

    def cut_by_an_interrupt(self, parsed, request_id):
        real_execute(self, parsed, request_id)  # it ran; the answer is cut
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("canceling statement due to user request")  # noqa: B904 - as the driver does

    monkeypatch.setattr(MigrationApply, "_execute", cut_by_an_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _apply(catalog_session, migrations)
    monkeypatch.undo()
    [v2] = [m for m in MigrationHistory(catalog_session.catalog).migrations() if m.script == "V2__region.sql"]
    assert v2.state == "APPLYING" and [s.state for s in v2.statements] == [RUNNING]
    lines = []
    assert _apply(catalog_session, migrations, lines=lines).applied == ["V2__region.sql"]
    assert any("(found done)" in line for line in lines), lines
    assert set(_states(catalog_session, migrations).values()) == {"APPLIED"}
