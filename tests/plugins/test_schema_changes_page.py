"""The "Schema changes" page, as the Airflow UI's iframe loads it (the `_token` cookie): jobs with
their state, kind, progress, Msg, boundary and timings, each table's schema history with columns,
Cancel / Resume where the state and the user allow; nothing at all for anonymous users."""

from __future__ import annotations

import re

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from tests.support.html_tree import parse
from tests.support.plugin_api import ACTION_HEADER
from tests.support.statements import sql

COOKIE = "_token"  # Airflow's session cookie (COOKIE_NAME_JWT_TOKEN)


def page(client, token: str | None, query: str = ""):
    client.cookies.clear()
    if token is not None:
        client.cookies.set(COOKIE, token)
    answer = client.get(f"/alterflow/{query}")
    client.cookies.clear()
    return answer


def job_rows(html: str) -> dict[int, dict]:
    doc = parse(html)
    rows = {}
    for tr in doc.find("table", id="jobs").find_all("tr", class_="job"):
        cells = {td.attrs["class"].split()[0]: td for td in tr.find_all("td")}
        rows[int(tr.attrs["data-job-id"])] = {
            **{name: td.text() for name, td in cells.items()},
            "state": tr.attrs["data-state"],
            "kind": tr.attrs["data-kind"],
            "table": tr.attrs["data-table"],
            "badges": cells["state"].text(),
            "buttons": [b.attrs["data-action"] for b in tr.find_all("button", data_action=True)],
        }
        finished = cells["finished"]
        times = finished.find_all("time")
        rows[int(tr.attrs["data-job-id"])]["finished"] = times[0].text() if times else finished.find("span", class_="date").text()
        rows[int(tr.attrs["data-job-id"])]["duration"] = finished.find("span", class_="duration").text()
        progress = cells["progress"]
        rows[int(tr.attrs["data-job-id"])]["progress"] = progress.find("span").text()
        bars = progress.find_all("progress")
        rows[int(tr.attrs["data-job-id"])]["bar"] = (bars[0].attrs["value"], bars[0].attrs["max"]) if bars else None
    return rows


@pytest.mark.spark
def test_the_page_shows_jobs_and_schema_history_and_offers_resume(plugin_session, spark, client, mint):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "CREATE TABLE other (k INT)")
    sql(s, "INSERT INTO t VALUES (1, '10'), (2, '20')")
    sql(s, "ALTER TABLE t RENAME COLUMN v TO val")
    done = sql(s, 'ALTER TABLE t MODIFY COLUMN val INT PROPERTIES ("postpone_swap" = "true")')
    heavy_id = int(re.fullmatch(r"ALTER TABLE t: job (\d+) READY_TO_SWAP, schema version 3", done).group(1))
    light_id = heavy_id - 1
    job = HeavyJobs(s.catalog).job(heavy_id)

    answer = page(client, mint("alice", "admin"))
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    doc = parse(answer.text)
    assert doc.find("span", id="user").text() == "alice"
    assert doc.find("body").attrs["data-api"] == "/alterflow/api" and doc.find("body").attrs["data-refresh"] == "on"
    assert doc.find("link", rel="stylesheet").attrs["href"] == "/alterflow/static/schema_changes.css"
    rows = job_rows(answer.text)
    assert list(rows) == [heavy_id, light_id]  # newest first
    heavy, light = rows[heavy_id], rows[light_id]
    assert (heavy["state"], heavy["kind"], heavy["table"]) == ("READY_TO_SWAP", "HEAVY", "t")
    assert heavy["badges"] == "READY_TO_SWAP HEAVY"
    assert heavy["progress"] == job.progress and job.progress.startswith("tablets ")
    done, total = re.match(r"tablets (\d+)/(\d+)", job.progress).groups()
    assert heavy["bar"] == (done, total) and done == total
    assert heavy["msg"] == job.msg and heavy["boundary"] == str(job.boundary_txn)
    # Postponed: it waits for a person since a time, and its duration is the work before the wait.
    assert heavy["version"] == "2 → 3" and heavy["duration"].endswith(" of work")
    assert heavy["finished"] == job.ready_to_swap_at.isoformat(sep=" ", timespec="seconds")
    assert "waiting for a swap since" in answer.text and "waiting for someone to swap it" in heavy["msg"]
    assert heavy["created"] == job.created_at.isoformat(sep=" ", timespec="seconds")
    assert heavy["buttons"] == ["analyze", "resume", "cancel"]
    assert (light["state"], light["kind"], light["boundary"], light["version"], light["buttons"]) == ("FINISHED", "LIGHT", "—", "1 → 2", [])
    assert (light["progress"], light["bar"]) == ("—", None)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", light["finished"]) and light["duration"].endswith(" s")
    assert "ALTER TABLE t RENAME COLUMN v TO val" in light["table-name"]

    # Schema history: one card per table, versions newest first, columns with their ids.
    history = doc.find("section", id="schema-history")
    cards = {c.attrs["data-table"]: c for c in history.find_all("article", class_="table-card")}
    assert set(cards) == {"t", "other"}
    versions = cards["t"].find_all("details", class_="version")
    assert [v.attrs["data-version"] for v in versions] == ["2", "1"]  # version 3 is not committed yet
    assert "open" in versions[0].attrs and "open" not in versions[1].attrs
    columns = {
        tr.attrs["data-column"]: {td.attrs["class"].split()[0]: td.text() for td in tr.find_all("td")}
        for tr in versions[0].find_all("tr", class_="column")
    }
    assert columns["id"] == {
        "name": "id",
        "type": "INT",
        "null": "NO",
        "key": "primary key distribution",
        "default": "",
        "column-id": "1",
        "change": "",
    }
    assert (columns["val"]["type"], columns["val"]["column-id"], columns["val"]["change"]) == ("STRING", "2", "renamed from v")
    assert f"job {heavy_id} unfinished" in cards["t"].text()

    # A viewer sees the same jobs but no buttons.
    assert job_rows(page(client, mint("val", "viewer")).text)[heavy_id]["buttons"] == ["analyze"]  # read-only

    # Resume through the API the page's button calls (with the cookie, as the page's fetch does).
    client.cookies.set(COOKIE, mint("alice", "admin"))
    answer = client.post(f"/alterflow/api/jobs/{heavy_id}/resume", headers=ACTION_HEADER, json={})
    client.cookies.clear()
    assert answer.status_code == 200 and answer.json()["state"] == "FINISHED"
    answer = page(client, mint("alice", "admin"), "?table=t")
    rows = job_rows(answer.text)
    assert (rows[heavy_id]["state"], rows[heavy_id]["buttons"]) == ("FINISHED", [])
    assert rows[heavy_id]["finished"] != "—" and "so far" not in rows[heavy_id]["duration"]
    assert rows[heavy_id]["progress"] == re.sub(r", [^,]* MB/s, ETA .*", "", job.progress)  # ended: no rate, no ETA
    doc = parse(answer.text)
    assert doc.find("body").attrs["data-refresh"] == "off"
    assert [c.attrs["data-table"] for c in doc.find_all("article", class_="table-card")] == ["t"]  # the filter
    v3 = doc.find("details", data_version="3")
    val = v3.find("tr", data_column="val")
    assert (val.find("td", class_="type").text(), val.find("td", class_="change").text()) == ("INT", "was STRING")
    assert "selected" in doc.find("option", value="t").attrs and "selected" not in doc.find("option", value="").attrs


def test_anonymous_users_and_bad_filters_see_no_data(plugin_session, client, mint):
    s = plugin_session
    sql(s, "CREATE TABLE secret_table (id INT)")
    sql(s, "ALTER TABLE secret_table ADD COLUMN hidden_column INT")
    for token in (None, mint() + "x"):
        answer = page(client, token)
        assert answer.status_code == 401
        assert "secret_table" not in answer.text and "hidden_column" not in answer.text
        message = parse(answer.text).find("div", id="message")
        assert "Not signed in" in message.text()
        # Sign in, then back to the page inside Airflow's UI (the link leaves the iframe).
        assert message.find("a").attrs == {"href": "/auth/login?next=%2Fplugin%2Fschema-changes", "target": "_top"}
    # No page but the CSS, JS and icon is served to anonymous users.
    for path in ("static/schema_changes.css", "static/schema_changes.js", "static/schema_changes.svg"):
        assert client.get(f"/alterflow/{path}").status_code == 200
    assert client.get("/alterflow/docs").status_code == 404 and client.get("/alterflow/openapi.json").status_code == 404

    token = mint("alice", "admin")
    answer = page(client, token, "?table=no_such_table")
    assert answer.status_code == 404 and "unknown table no_such_table" in parse(answer.text).find("div", id="message").text()
    answer = page(client, token, "?table=bad%20name")
    assert answer.status_code == 422
    assert "malformed table name 'bad name'" in parse(answer.text).find("div", id="message").text()
    assert "secret_table" not in answer.text

    # The filter: that table's job and history only; a table without jobs says so.
    sql(s, "CREATE TABLE quiet (id INT)")
    doc = parse(page(client, token, "?table=secret_table").text)
    assert [tr.attrs["data-table"] for tr in doc.find("table", id="jobs").find_all("tr", class_="job")] == ["secret_table"]
    assert "hidden_column" in doc.find("article", data_table="secret_table").text()
    doc = parse(page(client, token, "?table=quiet").text)
    assert doc.find_all("table", id="jobs") == [] and doc.find("p", id="no-jobs").text() == "No ALTER has run on quiet yet."
    assert [c.attrs["data-table"] for c in doc.find_all("article", class_="table-card")] == ["quiet"]
