"""Every run findable (alterflow.airflow.runs): a run of alterflow_schema_change that failed
before it made a job (at validate or at plan) is listed on the Schema changes page with its one
line and a link to the run, and carries the line as its note (the scheduler's listener, which
`dag.test()` runs too); a job an Airflow run made links to that run."""

from __future__ import annotations

from urllib.parse import quote

from tests.plugins.test_schema_changes_page import page
from tests.support.dags import SCHEMA_CHANGE, load_dag, note_of, run_dag
from tests.support.html_tree import parse
from tests.support.statements import sql


def failed_run_rows(html: str) -> dict[str, dict]:
    table = parse(html).find("table", id="failed-runs")
    if table is None:
        return {}
    return {
        tr.attrs["data-run-id"]: {
            "table": tr.attrs["data-table"],
            "line": tr.find("td", class_="msg").text(),
            "link": tr.find("td", class_="run").find("a").attrs["href"],
        }
        for tr in table.find_all("tr", class_="failed-run")
    }


def test_runs_that_failed_before_a_job_are_on_the_page_with_their_line_and_note(plugin_session, airflow_db, client, mint):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, 'a')")
    at_validate = {"table": "nope", "statement": "ALTER TABLE nope ADD COLUMN n INT"}
    at_plan = {"table": "t", "statement": "ALTER TABLE t DROP COLUMN id"}
    failed = {}
    for conf in (at_validate, at_plan):
        state, _states, run = run_dag(load_dag(SCHEMA_CHANGE), conf)
        assert state == "failed"
        failed[run.run_id] = run
    state, _states, light = run_dag(load_dag(SCHEMA_CHANGE), {"table": "t", "statement": "ALTER TABLE t ADD COLUMN n INT"})
    assert state == "success"

    rows = failed_run_rows(page(client, mint("alice", "admin")).text)
    # (Airflow's database is the test run's: other tests' failed runs may be listed too.)
    assert set(failed) <= set(rows), rows
    for run_id in failed:
        line = rows[run_id]["line"]
        assert line == note_of(run_id), (line, note_of(run_id))  # the run's note carries the same line
        assert rows[run_id]["link"] == f"/dags/{SCHEMA_CHANGE}/runs/{quote(run_id, safe='')}"
        assert "\n" not in line and "Traceback" not in line
    by_table = {rows[run_id]["table"]: rows[run_id]["line"] for run_id in failed}
    assert by_table["nope"] == "param table: unknown table nope"
    assert by_table["t"].startswith("ALTER TABLE t: ") and "id" in by_table["t"], by_table["t"]

    # The job the successful run made links to its run; the table filter keeps that table's runs.
    doc = parse(page(client, mint("alice", "admin"), "?table=t").text)
    [job_row] = doc.find("table", id="jobs").find_all("tr", class_="job")
    assert job_row.find("td", class_="job-id").find("a").attrs["href"] == f"/dags/{SCHEMA_CHANGE}/runs/{quote(light.run_id, safe='')}"
    assert {r["table"] for r in failed_run_rows(page(client, mint("alice", "admin"), "?table=t").text).values()} == {"t"}
