"""One error hierarchy (alterflow/errors.py): every refusal is a `UserError` and prints as its own
one line; anything else is an internal error whose line names its type and a log file holding the
traceback, so a bug never passes for a user's mistake. Both exit 1."""

from __future__ import annotations

import pathlib
import re

import pytest

from alterflow.airflow_client import AirflowRequestError
from alterflow.catalog import catalog_errors
from alterflow.cli import command as cli
from alterflow.engine.session import Session, StatementError
from alterflow.errors import AlterflowError, UserError
from alterflow.load.bad_rows import BadRows
from alterflow.load.inputs import LoadInputError
from alterflow.planner import AlterRejected, CreateTableRejected
from alterflow.read.query_binding import QueryError
from alterflow.rewrite.tablet_conversion import ConversionStopped
from alterflow.settings import SettingError
from alterflow.sql import SqlError
from alterflow.values.types import InvalidType, InvalidValue
from alterflow.workflow.alter_steps import HeavyChangeUnavailable
from alterflow.workflow.heavy_steps import JobCancelled
from alterflow.workflow.job_control import JobControlRefused

REFUSALS = [
    SqlError,
    AlterRejected,
    CreateTableRejected,
    SettingError,
    QueryError,
    BadRows,
    JobControlRefused,
    HeavyChangeUnavailable,
    JobCancelled,
    InvalidType,
    InvalidValue,
    StatementError,
    LoadInputError,
    AirflowRequestError,
    catalog_errors.CatalogError,
    catalog_errors.UnknownObject,
    catalog_errors.NameInUse,
    catalog_errors.ConcurrentChange,
    catalog_errors.DependentObjects,
    catalog_errors.TransactionStateError,
    catalog_errors.JobStateError,
    catalog_errors.LeaseHeld,
    catalog_errors.LeaseLost,
    catalog_errors.CatalogUnavailable,
]
INTERNAL_LINE = re.compile(r"error: internal error: KeyError: 'no such thing' \(details in (?P<path>/\S+\.log)\)")


@pytest.mark.parametrize("error", REFUSALS, ids=lambda e: e.__name__)
def test_every_refusal_is_a_user_error(error):
    assert issubclass(error, UserError)


def test_a_stopped_conversion_is_an_alterflow_error_but_not_a_user_error():
    """ConversionStopped is the workflow's own signal (the job was cancelled meanwhile), turned into
    the job's refusal by the step; on its own it is not a message for the user."""
    assert issubclass(ConversionStopped, AlterflowError) and not issubclass(ConversionStopped, UserError)


@pytest.fixture
def home(tmp_path, monkeypatch) -> pathlib.Path:
    home = tmp_path / "home"
    monkeypatch.setenv("ALTERFLOW_HOME", str(home))
    monkeypatch.delenv("ALTERFLOW_CATALOG_URL", raising=False)
    return home


def test_a_bug_is_an_internal_error_with_its_traceback_in_a_log(home, monkeypatch, capsys):
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 0

    def broken(self, statement):
        return {}["no such thing"]

    monkeypatch.setattr(Session, "execute", broken)
    capsys.readouterr()
    assert cli.main(["sql", "-e", "DESCRIBE t"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    found = INTERNAL_LINE.fullmatch(err.strip())
    assert found, err
    log = pathlib.Path(found["path"])
    assert log.parent == home / "logs"
    text = log.read_text()
    assert text.startswith("Traceback") and "in broken" in text and text.rstrip().endswith("KeyError: 'no such thing'")


def test_a_bug_in_a_load_and_in_gc_is_an_internal_error_too(home, monkeypatch, capsys, tmp_path):
    import alterflow.gc.gc_runner
    import alterflow.load.inputs

    csv = tmp_path / "rows.csv"
    csv.write_text("a\n1\n")
    monkeypatch.setattr(alterflow.load.inputs, "open_input", lambda *a: {}["no such thing"])
    monkeypatch.setattr(alterflow.gc.gc_runner, "run_gc", lambda *a, **k: {}["no such thing"])
    for argv in (["load", "t", str(csv)], ["gc"]):
        capsys.readouterr()
        assert cli.main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert INTERNAL_LINE.fullmatch(err), (argv, err)
    assert len(list((home / "logs").glob("internal-error-*.log"))) == 2


def test_a_refusal_prints_its_own_line_and_writes_no_log(home, capsys):
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT); ALTER TABLE t DROP COLUMN nope"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [err.strip()] and err.startswith("error: ALTER TABLE t") and "nope" in err
    assert "internal error" not in err
    assert not (home / "logs").exists()


def test_statement_nested_3000_deep_gets_one_line(home, capsys):
    deep = "(" * 3000 + "1" + ")" * 3000
    assert cli.main(["sql", "-e", f"SELECT {deep}"]) == 1
    assert capsys.readouterr().err == ("error: statement nested too deeply: more than 32 levels of parentheses at line 1, column 40\n")
    fits = "(" * 32 + "1" + ")" * 32
    assert cli.main(["sql", "-e", f"CREATE TABLE t (a INT); SELECT {fits} AS x FROM t"]) == 0


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("nonsense", "it is not a database URL"),
        ("nosuchdb://h/x", "it names a database SQLAlchemy does not know"),
        ("mysql://u:secret@127.0.0.1/x", "its database driver is not installed (No module named 'MySQLdb')"),
        ("postgresql://u:secret@127.0.0.1:1/x", "connection failed"),
        ("sqlite:////nonexistent-dir/catalog.db", "unable to open database file"),
    ],
)
def test_a_catalog_that_cannot_be_opened_is_refused_without_showing_the_url(home, monkeypatch, capsys, url, reason):
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", url)
    for argv in (["sql", "-e", "SHOW TABLES"], ["gc", "--dry-run"], ["db", "upgrade"]):
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: cannot open the catalog of ALTERFLOW_CATALOG_URL: {reason}"), err
        assert len(err.splitlines()) == 1 and "secret" not in err and "internal error" not in err
        assert not home.exists(), f"{argv}: a refused catalog left its home and warehouse folders behind"


def test_an_internal_error_with_a_huge_message_is_capped_and_keeps_its_log(home, monkeypatch, capsys):
    """docs/semantics.md, "Bad input": the message part is shortened and escaped; the log's path is never cut."""

    def broken(self, statement):
        raise RuntimeError("\x1b[2J" + "z" * 100_000)

    monkeypatch.setattr(Session, "execute", broken)
    capsys.readouterr()
    assert cli.main(["sql", "-e", "DESCRIBE t"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    line = err[:-1]
    assert line.isprintable() and line.startswith("error: internal error: RuntimeError: \\x1b[2Jzzz"), line[:200]
    found = re.search(r"…z+ \(shortened from 100007 characters\) \(details in (/\S+\.log)\)$", line)
    assert found, line
    assert pathlib.Path(found[1]).read_text().rstrip().endswith("z" * 1000)


def test_first_line_of_an_error_from_spark_s_jvm_is_the_java_exception_s_message():
    from alterflow.errors import first_line

    raised = Exception(
        "An error occurred while calling o158.collectToPython.\n"
        ": org.apache.spark.SparkException: [SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression. SQLSTATE: 21000\n"
        "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.scalarSubqueryTooManyRows(QueryExecutionErrors.scala:1)"
    )
    assert (
        first_line(raised)
        == "[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression. SQLSTATE: 21000"
    )
    assert first_line(Exception("An error occurred while calling o1.sql.")) == "An error occurred while calling o1.sql."
