"""Bad run conf (docs/semantics.md, "Bad input"): a missing or unknown table, an empty or malformed statement, a
statement of another table, properties that are not a JSON object: the run fails at its first
task, `validate`, with one clear line, and nothing changes. A plan the planner rejects fails at
`plan`, also changing nothing."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
from airflow.sdk.exceptions import AirflowFailException

from alterflow.airflow import tasks
from alterflow.engine.session import Session
from tests.support import child_pythonpath
from tests.support.dag_test_process import RUN_MARKER
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, jobs, load_dag, run_dag, sql, versions

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"
ROWS = "INSERT INTO t VALUES (1, 'a')"
ALTER = "ALTER TABLE t ADD COLUMN n INT"

BAD_CONF = [
    ({"statement": "ALTER TABLE "}, "param statement: "),
    ({"table": "", "statement": "SELECT 1"}, "param statement: the statement must be exactly one ALTER TABLE statement"),
    ({"table": "no_such_table", "statement": "ALTER TABLE no_such_table ADD COLUMN n INT"}, "unknown table no_such_table"),
    ({"table": "t; DROP TABLE t", "statement": ALTER}, "param table: invalid name"),
    ({"table": "t"}, "param statement: empty"),
    ({"table": "t", "statement": "   "}, "param statement: empty"),
    ({"table": "t", "statement": "ALTER TABLE t FROBNICATE v"}, "param statement: ALTER TABLE t:"),
    ({"table": "t", "statement": "SELECT 1"}, "exactly one ALTER TABLE statement"),
    ({"table": "t", "statement": f"{ALTER}; {ALTER}"}, "exactly one ALTER TABLE statement"),
    ({"table": "t", "statement": "ALTER TABLE u ADD COLUMN n INT"}, "the statement alters u, not t"),
    ({"table": "t", "statement": ALTER, "properties": "not json"}, "param properties: not valid JSON"),
    ({"table": "t", "statement": ALTER, "properties": "[1, 2]"}, "param properties: expected a JSON object"),
    ({"table": "t", "statement": ALTER, "properties": '"text"'}, "param properties: expected a JSON object"),
    ({"table": "t", "statement": ALTER, "properties": {"timeout": {"nested": 1}}}, "must be a string, number or boolean"),
    ({"statement": ALTER, "postpone_swap": "yes"}, "param postpone_swap: expected true or false, got 'yes'"),
    ({"statement": ALTER, "on_cast_error": "skip"}, "param on_cast_error: expected fail or null or quarantine, got 'skip'"),
    ({"statement": ALTER, "timeout": 0}, "param timeout: expected a positive number of seconds, got '0'"),
    ({"table": "t", "statement": ALTER, "resume_job_id": "seven"}, "param resume_job_id: expected the id of an orphaned"),
    ({"table": "t", "statement": ALTER, "resume_job_id": -3}, "param resume_job_id: expected the id of an orphaned"),
    ({"table": "t", "statement": ALTER, "resume_job_id": "²"}, "param resume_job_id: expected the id of an orphaned"),
    ({"table": "t", "statement": ALTER, "resume_job_id": 10**30}, "param resume_job_id: expected the id of an orphaned"),
    ({"table": "x" * 100_000, "statement": ALTER}, "(100000 characters)"),
    ({"table": "t\x1b[2J", "statement": ALTER}, "'t\\x1b[2J'"),
]


@pytest.fixture
def alterflow(monkeypatch, tmp_path):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, TABLE)
    sql(session, ROWS)
    return session


def snapshot(session: Session):
    info = session.catalog.table("t")
    return versions(session, "t"), info.current_index_id, jobs(session, "t"), sql(session, "DESCRIBE t")


@pytest.mark.parametrize(("conf", "message"), BAD_CONF, ids=[m for _, m in BAD_CONF])
def test_validate_refuses_bad_conf_with_one_line(alterflow, conf, message):
    before = snapshot(alterflow)
    with pytest.raises(AirflowFailException) as raised:
        tasks.validate(conf, "manual__bad")
    text = str(raised.value)
    assert message in text and "\n" not in text, text
    assert len(text) <= 300 and text.isprintable(), text  # one short line (docs/semantics.md, "Bad input")
    assert snapshot(alterflow) == before


def start_runs(confs: list[dict], folder: pathlib.Path) -> tuple[subprocess.Popen, pathlib.Path]:
    """`dag.test()` of each conf, one after the other, in a process of its own (dag_test_process);
    what it prints goes to a file (a pipe nobody reads while this process runs its own could fill)."""
    folder.mkdir()
    (folder / "confs.json").write_text(json.dumps(confs))
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), PYTHONUNBUFFERED="1")
    with open(folder / "confs.json") as stdin, open(folder / "out", "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.dag_test_process", SCHEMA_CHANGE],
            env=env,
            stdin=stdin,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    return proc, folder / "out"


def results_of(proc: subprocess.Popen, out: pathlib.Path) -> list[tuple[dict, str]]:
    """Each run's RESULT and what it printed."""
    proc.wait(timeout=600)
    printed = out.read_text(errors="replace")
    assert proc.returncode == 0, printed[-6000:]
    results = []
    for part in printed.split(f"{RUN_MARKER} ")[1:]:
        logs, _, result = part.rpartition("\nRESULT ")
        results.append((json.loads(result.splitlines()[0]), logs))
    return results


def check_failed_at_validate(conf: dict, message: str, state: str, states: dict, printed: str) -> None:
    assert state == "failed", (conf, states)
    assert states["validate"] == "failed", (conf, states)
    assert all(s in ("upstream_failed", None) for t, s in states.items() if t != "validate"), (conf, states)
    assert message in printed, conf  # the task log says why


# Whole DAG runs of one bad conf of each kind the trigger form's schema lets through (an unknown
# table, a bad table name, a statement that does not parse, bad properties, a bad orphan id, a name
# with a control character): the DAG fails them all alike at validate; every conf's own line is
# checked at the task above. What the schema refuses never becomes a run (below).
BAD_RUNS = [BAD_CONF[i] for i in (2, 3, 6, 10, 17, 22)]


def test_bad_runs_fail_at_validate_and_change_nothing(alterflow, airflow_db, capfd, tmp_path):
    """Each run is mostly dag.test() waiting (a second for each level of the DAG that
    upstream_failed reaches), so a third of them run here and the rest in two processes at once."""
    before = snapshot(alterflow)
    others = [(BAD_RUNS[i::3], *start_runs([conf for conf, _ in BAD_RUNS[i::3]], tmp_path / f"runs{i}")) for i in (1, 2)]
    for conf, message in BAD_RUNS[0::3]:
        # A fresh DAG per run: dag.test() runs every task in this process on the same operator
        # objects, and the task runner merges a run's conf into them (a worker parses anew).
        state, states, _run = run_dag(load_dag(SCHEMA_CHANGE), conf)
        check_failed_at_validate(conf, message, state, states, capfd.readouterr().out)
        assert snapshot(alterflow) == before, conf
    for cases, proc, out in others:
        results = results_of(proc, out)
        assert len(results) == len(cases), results
        for (conf, message), (result, printed) in zip(cases, results):
            check_failed_at_validate(conf, message, result["state"], result["tasks"], printed)
    assert snapshot(alterflow) == before


def test_a_rejected_plan_fails_at_plan_and_changes_nothing(alterflow, airflow_db):
    dag = load_dag(SCHEMA_CHANGE)
    before = snapshot(alterflow)
    state, states, _run = run_dag(dag, {"table": "t", "statement": "ALTER TABLE t DROP COLUMN id"})
    assert state == "failed" and states["validate"] == "success" and states["plan"] == "failed", states
    assert snapshot(alterflow) == before


REFUSED_AT_TRIGGER = [
    {"table": "t", "statement": ALTER, "properties": [1, 2]},
    {"statement": ""},
    {"statement": "SELECT 1"},
    {"statement": "ALTR TABLE t ADD COLUMN n INT"},
    {"statement": ALTER, "postpone_swap": "yes"},
    {"statement": ALTER, "on_cast_error": "skip"},
    {"statement": ALTER, "timeout": 0},
]


@pytest.mark.parametrize("conf", REFUSED_AT_TRIGGER, ids=lambda c: ",".join(f"{k}={v!r}"[:30] for k, v in c.items()))
def test_what_the_forms_schema_refuses_never_becomes_a_run(alterflow, airflow_db, conf):
    """The trigger form (and Airflow's REST API) checks each param's JSON schema: a statement that
    is not an ALTER TABLE, a property of the wrong type or value is a form error, not a failed run."""
    from airflow.exceptions import ParamValidationError

    dag = load_dag(SCHEMA_CHANGE)
    before = snapshot(alterflow)
    with pytest.raises(ParamValidationError):
        dag.test(run_conf=conf)
    assert snapshot(alterflow) == before


def test_the_table_comes_from_the_statement_and_the_form_properties_reach_the_request(alterflow, airflow_db):
    """No `table` param: the statement names the table. The form's property fields become the
    statement's properties, over the JSON ones."""
    request = tasks.validate(
        {
            "statement": "ALTER TABLE T MODIFY COLUMN v INT",
            "postpone_swap": True,
            "on_cast_error": "null",
            "properties": {"timeout": "60", "engine": "spark"},
            "engine": "local",
        },
        "manual__form",
    )
    assert request["table"] == "T" and request["statement"] == "ALTER TABLE T MODIFY COLUMN v INT"
    assert request["properties"] == {"timeout": "60", "engine": "local", "postpone_swap": "true", "on_cast_error": "null"}
    state, states, run = run_dag(load_dag(SCHEMA_CHANGE), {"statement": "ALTER TABLE t ADD COLUMN n INT"})
    assert state == "success", states
    assert [j.request_id for j in jobs(alterflow, "t")] == [run.run_id] and versions(alterflow, "t") == [1, 2]
