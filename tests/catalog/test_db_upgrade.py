"""`alterflow db upgrade` (docs/semantics.md): a SQLite catalog is created and upgraded when it is opened; a
PostgreSQL catalog never is: opening an empty or outdated one is refused with a line that names the
command, and the command migrates it."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import CatalogOutdated
from alterflow.catalog.database import head_revision, migrated_implicitly, normalise_url
from alterflow.cli import command as cli
from alterflow.engine.session import Session, StatementError

pytestmark = pytest.mark.postgres


def _tables(url: str) -> set[str]:
    from sqlalchemy import inspect

    engine = create_engine(normalise_url(url))
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def _set_revision(url: str, revision: str) -> None:
    engine = create_engine(normalise_url(url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    engine.dispose()


def test_only_sqlite_is_migrated_implicitly():
    assert migrated_implicitly("sqlite:////tmp/x/catalog.db")
    assert not migrated_implicitly("postgresql://u@h/db")
    assert not migrated_implicitly("postgresql+psycopg://u@h/db")


def test_an_empty_postgresql_catalog_is_refused_and_left_empty(pg_empty_url, monkeypatch, tmp_path):
    with pytest.raises(CatalogOutdated) as info:
        Catalog(pg_empty_url)
    assert str(info.value) == (
        "the catalog database of ALTERFLOW_CATALOG_URL has no alterflow tables yet: "
        f"run `alterflow db upgrade` to create them (migration {head_revision()})"
    )
    assert _tables(pg_empty_url) == set()


def test_the_cli_refuses_in_one_line_then_db_upgrade_creates_and_the_cli_works(pg_empty_url, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", pg_empty_url)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: the catalog database of ALTERFLOW_CATALOG_URL has no alterflow tables")
    assert "alterflow db upgrade" in err and "postgres@" not in err  # names the command, never the URL
    assert _tables(pg_empty_url) == set()

    assert cli.main(["db", "upgrade"]) == 0
    assert capsys.readouterr().out == f"catalog created at migration {head_revision()}\n"
    assert cli.main(["db", "upgrade"]) == 0
    assert capsys.readouterr().out == f"catalog already at migration {head_revision()}\n"
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1); SELECT * FROM t"]) == 0


def _migrate_to(url: str, revision: str) -> None:
    """The catalog as release `revision` left it (Alembic up to that migration only)."""
    from alembic import command

    from alterflow.catalog.database import alembic_config, make_engine

    engine = make_engine(normalise_url(url))
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
    engine.dispose()


def test_an_outdated_postgresql_catalog_is_refused_until_db_upgrade(pg_empty_url, capsys, monkeypatch, tmp_path):
    _migrate_to(pg_empty_url, "0003")  # a catalog of the release before leases
    with pytest.raises(CatalogOutdated, match=rf"is at migration 0003, this release needs {head_revision()}: run `alterflow db upgrade`"):
        Catalog(pg_empty_url)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", pg_empty_url)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    assert "run `alterflow db upgrade`" in capsys.readouterr().err
    assert cli.main(["db", "upgrade"]) == 0
    assert capsys.readouterr().out == f"catalog upgraded from migration 0003 to {head_revision()}\n"
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)"]) == 0


def test_a_catalog_newer_than_this_release_is_refused_and_not_touched(pg_url, capsys, monkeypatch, tmp_path):
    _set_revision(pg_url, "9999")
    with pytest.raises(CatalogOutdated, match="is at migration 9999, newer than this release's"):
        Catalog(pg_url)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", pg_url)
    assert cli.main(["db", "upgrade"]) == 1
    assert "newer than this release's" in capsys.readouterr().err


def test_db_upgrade_of_an_unreachable_catalog_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", "postgresql://nobody:secret@127.0.0.1:1/nothing")
    assert cli.main(["db", "upgrade"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot open the catalog of ALTERFLOW_CATALOG_URL") and err.count("\n") == 1 and "secret" not in err


@pytest.mark.parametrize("argv", [["db"], ["db", "downgrade"]])
def test_db_needs_a_known_subcommand(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2


def test_the_default_sqlite_catalog_is_created_on_first_use(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ALTERFLOW_CATALOG_URL", raising=False)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 0
    assert cli.main(["db", "upgrade"]) == 0
    assert capsys.readouterr().out.endswith(f"catalog already at migration {head_revision()}\n")
    with pytest.raises(StatementError, match="already exists"):
        list(Session().run("CREATE TABLE t (a INT)"))
