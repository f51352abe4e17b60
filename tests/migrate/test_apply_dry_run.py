"""`alterflow migrate apply --dry-run` refuses exactly as `apply` would: for every refusal of apply,
the same line on stderr and the same exit status, and neither changes anything (both catalogs)."""

from __future__ import annotations

import json

import pytest

from tests.migrate.conftest import ORDERS
from tests.migrate.migrate_cli import MigrateCli


@pytest.fixture
def cli(settings, migrations, monkeypatch, capsys) -> MigrateCli:
    return MigrateCli(settings, migrations.path, monkeypatch, capsys)


def _applied(cli: MigrateCli, *args: str) -> None:
    done = cli("apply", *args)
    assert done.code == 0, done


def _history(migrations) -> None:
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n")
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")


def _failed(cli, migrations) -> None:
    """V2 FAILED at its second statement (a cast of 'b' to INT), its first statement done."""
    _history(migrations)
    _applied(cli, "--to", "1")
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN note INT;\n")
    assert cli("apply").code == 1


def edited(cli, migrations):
    _history(migrations)
    _applied(cli)
    migrations.write("V2__region.sql", "-- reviewed\nALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    return (), "error: migrate apply: V2__region.sql was edited since it was applied (checksum); review the change, then"


def deleted(cli, migrations):
    """A file below the highest one deleted (the highest deleted would be FUTURE, a warning)."""
    _history(migrations)
    migrations.write("V3__channel.sql", "ALTER TABLE orders ADD COLUMN channel VARCHAR(8);\n")
    _applied(cli)
    (migrations.path / "V2__region.sql").unlink()
    return (), "error: migrate apply: V2__region.sql is APPLIED in the history but no longer in the directory"


def failed(cli, migrations):
    _failed(cli, migrations)
    return (), "error: migrate apply: V2__region.sql FAILED: V2__region.sql:2: ALTER TABLE orders: "


def out_of_order(cli, migrations):
    _history(migrations)
    _applied(cli)
    migrations.write("V1.5__late.sql", "ALTER TABLE orders ADD COLUMN late INT;\n")
    return (), "error: migrate apply: V1.5__late.sql is pending but a higher version is already applied"


def unknown_to(cli, migrations):
    _history(migrations)
    return ("--to", "7"), "error: migrate apply: --to 7: no migration file has version 7"


def rejected(cli, migrations):
    _history(migrations)
    _applied(cli, "--to", "1")
    migrations.write("V3__bad.sql", "ALTER TABLE orders ADD COLUMN ok INT;\nALTER TABLE orders DROP COLUMN nothere;\n")
    return (), "error: migrate apply: V3__bad.sql line 2: ALTER TABLE orders: "


def changed_done_statement(cli, migrations):
    _failed(cli, migrations)
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN area VARCHAR(8);\nALTER TABLE orders MODIFY COLUMN amount BIGINT;\n")
    assert cli("repair").code == 0
    return (), "error: migrate apply: V2__region.sql statement 1 (line 1) was already applied with another text"


def sum_mismatch(cli, migrations):
    _history(migrations)
    assert cli("hash").code == 0
    migrations.write("V3__unreviewed.sql", "ALTER TABLE orders ADD COLUMN late INT;\n")
    return (), f"error: {migrations.path}/alterflow.sum does not match the directory: added V3__unreviewed.sql; review the changes"


REFUSALS = [edited, deleted, failed, out_of_order, unknown_to, rejected, changed_done_statement, sum_mismatch]


@pytest.mark.parametrize("refusal", REFUSALS, ids=[r.__name__ for r in REFUSALS])
def test_the_dry_run_refuses_as_apply_does(cli, migrations, refusal):
    args, expected = refusal(cli, migrations)
    before = cli("status", "--format", "json")
    dry = cli("apply", "--dry-run", *args)
    after_dry = cli("status", "--format", "json")
    real = cli("apply", *args)
    assert dry.error_line.startswith(expected), dry.err
    assert (dry.code, dry.out, dry.err) == (real.code, real.out, real.err)
    assert dry.out == ""
    after = cli("status", "--format", "json")
    if before.code == 0:  # status itself refuses a directory that does not match its sum file
        assert json.loads(before.out) == json.loads(after_dry.out) == json.loads(after.out)
    else:
        assert before.err == after_dry.err == after.err


def test_a_dry_run_that_passes_prints_the_plan_and_changes_nothing(cli, migrations):
    _history(migrations)
    dry = cli("apply", "--dry-run")
    assert dry.code == 0, dry
    assert dry.out.splitlines()[-1] == "dry run: 3 statement(s) would run; nothing was changed"
    assert "would run V2__region.sql:1  ALTER TABLE orders ADD COLUMN region VARCHAR(8)" in dry.out
    states = {m["script"]: m["state"] for m in json.loads(cli("status", "--format", "json").out)["migrations"]}
    assert states == {"V1__orders.sql": "PENDING", "V2__region.sql": "PENDING"}
