"""Live end to end: a real Airflow (`make airflow`'s command, in a throwaway home on a free port),
an ALTER triggered through the REST API with a token and one sent by `alterflow sql` through
ALTERFLOW_AIRFLOW_URL, both DAG runs waited for, the catalog checked through the CLI, then the
browser part in headless Chromium (Debian's chromium and chromedriver, `make browser`) as the
signed-in admin: a third ALTER triggered from the DAG's trigger form as a user would, its run waited
for, then the "Schema changes" page opened, the job's row found and a screenshot saved (to
$ALTERFLOW_SCREENSHOT when set, e.g. `docs/schema-changes.png` for docs/airflow.md; the form's
screenshot goes beside it as `trigger-form.png`).

Every Airflow, task and spark-submit process is stopped at the end, also on failure; on failure
the Airflow output and the task logs are printed."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import subprocess
import sys
import time
import urllib.parse
from datetime import datetime

import pytest

from tests.support import REPO
from tests.support.live_airflow import BIN, LiveAirflow, dags_folder

pytestmark = [
    pytest.mark.live,
    pytest.mark.spark,
    pytest.mark.timeout(1200),
]  # as make test's --timeout: the shared Airflow's start counts in the first test

DAG = "alterflow_schema_change"
LISTENER = "orders_schema_changed"  # examples/schema_change_listener.py
CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMEDRIVER = pathlib.Path("/usr/bin/chromedriver")
HEAVY_RUN = "e2e_orders_amount_to_int"
MIGRATE = "alterflow_migrate"
MIGRATE_RUN = "e2e_migrate_customers"
# examples/dags: loads of SALES while a heavy ALTER rewrites it, and a DAG that runs on its loads only.
SALES = "alterflow_example_sales"
SALES_NOTE_RUN = "e2e_sales_note"  # a light ALTER of SALES: a schema change the load listener skips
# Triggered at once on one table: a heavy change and five ADD COLUMNs (docs/airflow.md#runs-on-one-table).
BURST = [("e2e_burst_heavy", "ALTER TABLE burst MODIFY COLUMN v SMALLINT")] + [
    (f"e2e_burst_add_{n}", f"ALTER TABLE burst ADD COLUMN c{n} INT DEFAULT {n}") for n in range(5)
]
LOADS = "alterflow_example_load_during_alter"
LOADS_RUN = "e2e_loads_during_alter"
REFUSED_RUN = "e2e_unknown_table"  # fails at validate: its line becomes the run's note, in the real scheduler
LOAD_LISTENER = "alterflow_example_sales_loaded"
ROWS_PER_LOAD = 1000
# The api-server's migrations directory (./migrations of its working directory): the run applies
# up to V2 (a rewrite: the rules ask for approval); V3 stays pending, for the page's pending lint.
MIGRATIONS = {
    "V1__customers.sql": "CREATE TABLE customers (id INT NOT NULL, name STRING, tier STRING, PRIMARY KEY (id));\n"
    "INSERT INTO customers VALUES (1, 'Ada', '1'), (2, 'Grace', '2'), (3, 'Edsger', '1');\n",
    "V2__customers_tier_to_int.sql": "ALTER TABLE customers MODIFY COLUMN tier INT;\n",
    "V3__customers_email.sql": "ALTER TABLE customers ADD COLUMN email STRING;\n\n-- the names moved to the CRM\nALTER TABLE customers DROP COLUMN name;\n",
}


@contextlib.contextmanager
def running_airflow(tmp_path: pathlib.Path, base_path: str = "", dags_folder: pathlib.Path | None = None, connections: dict | None = None):
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        message = "Debian's chromium and chromium-driver are not installed: run `make browser`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    live = LiveAirflow(tmp_path, base_path=base_path, dags_folder=dags_folder, connections=connections)
    live.start()
    try:
        yield live
    except BaseException:
        print(live.diagnostics(), file=sys.stderr)
        raise
    finally:
        live.stop()


@pytest.fixture
def airflow(tmp_path):
    """A team's own DAG folder: the two-line DAG files of dags/, the example listener of examples/
    (scheduled on the asset of the table `orders`) and the DAGs of examples/dags (loads during a
    heavy ALTER, and a listener of that table's loads). Every component has the Airflow connection
    alterflow_default (type alterflow) with the catalog and warehouse the CLI finds in the run's
    ALTERFLOW_HOME, so the tasks, the triggerer and the page read it through AlterflowHook. Served
    under /af, as behind a reverse proxy (`[api] base_url = http://host:port/af/`): one Airflow
    start for both (the plugin tests cover the page at the root path in process)."""
    examples = (REPO / "examples" / "schema_change_listener.py", *sorted((REPO / "examples" / "dags").glob("*.py")))
    dags = dags_folder(tmp_path / "team-dags", also=examples)
    home = tmp_path / "alterflow"  # LiveAirflow's alterflow home
    extra = {"catalog_url": f"sqlite:///{home / 'catalog.db'}", "warehouse": str(home / "warehouse")}
    connections = {"alterflow_default": {"conn_type": "alterflow", "extra": extra}}
    with running_airflow(tmp_path, base_path="/af", dags_folder=dags, connections=connections) as live:
        yield live


def sql(live: LiveAirflow, text: str, env: dict[str, str] | None = None, timeout: float = 300) -> list[dict]:
    """`alterflow sql -e TEXT --format json` with the live run's alterflow home: the result sets."""
    done = subprocess.run(
        [str(BIN / "alterflow"), "sql", "--format", "json", "-e", text],
        env=env or live.cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"alterflow sql -e {text!r} failed ({done.returncode}):\n{done.stderr[-4000:]}\n{live.slowest_requests()}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def migrate(live: LiveAirflow, directory: pathlib.Path, *args: str) -> str:
    """`alterflow migrate --dir DIRECTORY ARGS` with the live run's alterflow home: its output."""
    done = subprocess.run(
        [str(BIN / "alterflow"), "migrate", "--dir", str(directory), *args],
        env=live.cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"alterflow migrate {' '.join(args)}: {done.stderr[-3000:]}"
    return done.stdout


def migrate_status(live: LiveAirflow, directory: pathlib.Path) -> dict:
    return json.loads(migrate(live, directory, "status", "--format", "json"))


def rows_as_dicts(result: dict) -> list[dict]:
    return [dict(zip(result["columns"], row)) for row in result["rows"]]


def wait_for_dag(live: LiveAirflow, headers: dict, timeout: float = 150, dag: str = DAG) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live.check_running()
        answer = live.call("GET", f"/api/v2/dags/{dag}", headers=headers)
        if answer.status_code == 200:
            return answer.json()
        time.sleep(1)
    errors = live.call("GET", "/api/v2/importErrors", headers=headers).text
    raise AssertionError(f"DAG {dag} not parsed after {timeout} s; import errors: {errors}")


def task_states(live: LiveAirflow, headers: dict, run_id: str, dag: str = DAG) -> dict[str, str | None]:
    answer = live.call("GET", f"/api/v2/dags/{dag}/dagRuns/{run_id}/taskInstances", headers=headers)
    return {ti["task_id"]: ti["state"] for ti in answer.json().get("task_instances", [])}


def wait_for_run(live: LiveAirflow, headers: dict, run_id: str, timeout: float = 420, dag: str = DAG) -> dict:
    deadline = time.monotonic() + timeout
    run: dict = {}
    while time.monotonic() < deadline:
        live.check_running()
        answer = live.call("GET", f"/api/v2/dags/{dag}/dagRuns/{run_id}", headers=headers)
        assert answer.status_code == 200, f"GET dag run {run_id}: {answer.status_code} {answer.text}"
        run = answer.json()
        if run["state"] in ("success", "failed"):
            break
        time.sleep(2)
    states = task_states(live, headers, run_id, dag)
    if run.get("state") != "success":
        print(live.task_logs(run_id), flush=True)  # whole, in the report's captured stdout
    assert run.get("state") == "success", f"DAG run {run_id} ended {run.get('state')!r} (tasks: {states})\n{live.task_problems(run_id)}"
    return {"run": run, "tasks": states}


def check_a_refused_run(live: LiveAirflow, headers: dict, timeout: float = 240) -> None:
    """A run whose statement names no table fails at validate; the scheduler's listener writes its
    one line as the run's note, and the Schema changes page lists it with that line and a link."""
    conf = {"statement": "ALTER TABLE no_such_table ADD COLUMN n INT"}
    answer = live.call(
        "POST", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, json={"dag_run_id": REFUSED_RUN, "logical_date": None, "conf": conf}
    )
    assert answer.status_code in (200, 409), f"trigger: {answer.status_code} {answer.text}"
    deadline = time.monotonic() + timeout
    run: dict = {}
    while time.monotonic() < deadline and run.get("state") != "failed":
        live.check_running()
        time.sleep(2)
        run = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{REFUSED_RUN}", headers=headers).json()
    line = "ALTER TABLE no_such_table: unknown table no_such_table"
    assert (run.get("state"), run.get("note")) == ("failed", line), f"{run}\n{live.task_problems(REFUSED_RUN)}"
    html = live.call("GET", "/alterflow/", headers=headers).text
    assert f'data-run-id="{REFUSED_RUN}"' in html and line in html, html[-3000:]


def wait_for_listener(live: LiveAirflow, headers: dict, timeout: float = 240) -> list[list]:
    """The return value (DESCRIBE orders' rows) of the first successful run of the listener DAG."""
    deadline = time.monotonic() + timeout
    runs: dict = {}
    while time.monotonic() < deadline:
        live.check_running()
        runs = live.call("GET", f"/api/v2/dags/{LISTENER}/dagRuns", headers=headers).json()
        done = [r for r in runs.get("dag_runs", []) if r["state"] == "success"]
        if done:
            assert done[0]["run_type"] == "asset_triggered", done[0]
            run_id = urllib.parse.quote(done[0]["dag_run_id"], safe="")
            answer = live.call(
                "GET", f"/api/v2/dags/{LISTENER}/dagRuns/{run_id}/taskInstances/print_new_schema/xcomEntries/return_value", headers=headers
            )
            assert answer.status_code == 200, f"{answer.status_code} {answer.text}"
            value = answer.json()["value"]
            return json.loads(value) if isinstance(value, str) else value
        failed = [r for r in runs.get("dag_runs", []) if r["state"] == "failed"]
        assert not failed, f"{LISTENER} failed: {failed}\n{live.task_logs(failed[0]['dag_run_id'])}"
        time.sleep(2)
    raise AssertionError(f"no successful run of {LISTENER} within {timeout} s: {runs}")


def xcom(live: LiveAirflow, headers: dict, dag: str, run_id: str, task_id: str):
    """The return value of a task of a run."""
    path = f"/api/v2/dags/{dag}/dagRuns/{urllib.parse.quote(run_id, safe='')}/taskInstances/{task_id}/xcomEntries/return_value"
    answer = live.call("GET", path, headers=headers)
    assert answer.status_code == 200, f"{answer.status_code} {answer.text}"
    value = answer.json()["value"]
    return json.loads(value) if isinstance(value, str) else value


def wait_for_load_listener(live: LiveAirflow, headers: dict, loads: int, timeout: float = 240) -> list[dict]:
    """The load listener's runs (each with its triggering events and task states), once every run
    has ended and each of the table's `loads` load events is accounted for: taken by a run, or
    passed over by Airflow 3.3's scheduler (an event committed while the run whose window holds its
    timestamp was being created is never handed to a run: apache/airflow#54659, docs/limits.md).
    At least one load must reach the listener."""
    deadline = time.monotonic() + timeout
    found: list[dict] = []
    while time.monotonic() < deadline:
        live.check_running()
        runs = live.call("GET", f"/api/v2/dags/{LOAD_LISTENER}/dagRuns", headers=headers, params={"limit": 100}).json().get("dag_runs", [])
        failed = [r for r in runs if r["state"] == "failed"]
        assert not failed, f"{LOAD_LISTENER} failed: {failed}\n{live.task_logs(failed[0]['dag_run_id'])}"
        found = []
        for run in runs:
            run_id = urllib.parse.quote(run["dag_run_id"], safe="")
            events = live.call("GET", f"/api/v2/dags/{LOAD_LISTENER}/dagRuns/{run_id}/upstreamAssetEvents", headers=headers).json()
            found.append({**run, "events": events["asset_events"], "tasks": task_states(live, headers, run["dag_run_id"], LOAD_LISTENER)})
        taken = {e["id"] for run in found for e in run["events"] if e["extra"].get("event") == "load"}
        load_events = [e for e in sales_asset_events(live, headers) if e["extra"].get("event") == "load"]
        latest_window = max((datetime.fromisoformat(run["run_after"]) for run in found), default=None)
        passed_over = [
            e
            for e in load_events
            if e["id"] not in taken
            and not e["created_dagruns"]
            and latest_window
            and datetime.fromisoformat(e["timestamp"]) <= latest_window
        ]
        ended = found and all(run["state"] == "success" for run in found)
        if ended and len(load_events) == loads and taken and len(taken) + len(passed_over) == loads:
            assert all(run["run_type"] == "asset_triggered" for run in found), found
            print(f"load events passed over by Airflow's scheduler: {[e['id'] for e in passed_over]}")
            return found
        time.sleep(2)
    raise AssertionError(f"{LOAD_LISTENER}: not {loads} loads accounted for in ended runs within {timeout} s: {found}")


def sales_asset_events(live: LiveAirflow, headers: dict) -> list[dict]:
    """The latest events on SALES's asset (of the last 100 on any asset), each with the runs it created."""
    answer = live.call("GET", "/api/v2/assets/events", headers=headers, params={"limit": 100, "order_by": "-timestamp"})
    assert answer.status_code == 200, f"{answer.status_code} {answer.text}"
    return [e for e in answer.json()["asset_events"] if e["uri"] == f"alterflow://default/{SALES}"]


@contextlib.contextmanager
def browser(live: LiveAirflow, token: str):
    """Headless Chromium signed in to the live Airflow as admin (Airflow's `_token` cookie)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1600,1000"):
        options.add_argument(flag)
    service = Service(str(CHROMEDRIVER), log_output=str(live.base / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(60)
        driver.get(f"{live.url}/api/v2/version")  # any page of the origin, to set its cookie
        driver.add_cookie({"name": "_token", "value": token, "path": "/"})
        yield driver
    finally:
        driver.quit()


def page_wait(driver):
    """A 90 s wait that looks again when React re-rendered an element between finding and using it."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 90, ignored_exceptions=(StaleElementReferenceException,))


def click_button(wait, text: str, which: int) -> None:
    """Click the `which`-th button whose text is `text`, found and clicked in one look (so a
    re-render in between makes the wait look again instead of failing)."""
    from selenium.webdriver.common.by import By

    def clicked(driver) -> bool:
        buttons = [b for b in driver.find_elements(By.TAG_NAME, "button") if b.text.strip() == text]
        if not buttons:
            return False
        buttons[which].click()
        return True

    wait.until(clicked)


def trigger_from_the_form(driver, live: LiveAirflow, table: str, statement: str, screenshot: pathlib.Path) -> str:
    """What a user does: the DAG's page, *Trigger*, the form's statement field (the statement names
    `table`: the form has no field of its own for it), *Trigger*. Returns the run id of the page
    Airflow then opens."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    assert f"ALTER TABLE {table} " in statement
    wait = page_wait(driver)
    driver.get(f"{live.url}/dags/{DAG}")
    click_button(wait, "Trigger", which=0)
    field = wait.until(ready.element_to_be_clickable((By.ID, "element_statement")))
    form_text = driver.find_element(By.TAG_NAME, "body").text
    for words in ("ALTER TABLE statement", "Dry run (EXPLAIN ANALYZE)", "Properties (optional"):  # the properties: a section
        assert words in form_text, f"the trigger form does not show {words!r}"  # the params' titles
    for internal in ("element_table", "element_resume_job_id"):  # nothing internal, nothing the statement says
        assert not driver.find_elements(By.ID, internal), f"the trigger form shows {internal}"
    assert "Orphaned job" not in form_text
    field.send_keys(statement)  # (typed quotes may lose the space before them)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(screenshot))
    click_button(wait, "Trigger", which=-1)
    wait.until(lambda d: f"/dags/{DAG}/runs/" in d.current_url)
    return urllib.parse.unquote(driver.current_url.split("/runs/", 1)[1].split("/", 1)[0].split("?", 1)[0])


def wait_for_approval(live: LiveAirflow, headers: dict, run_id: str, timeout: float = 300) -> dict:
    """The human-in-the-loop detail of the migrate run's approval, once the task awaits input."""
    deadline = time.monotonic() + timeout
    states: dict = {}
    while time.monotonic() < deadline:
        live.check_running()
        states = task_states(live, headers, run_id, MIGRATE)
        if states.get("approval") == "awaiting_input":
            answer = live.call("GET", f"/api/v2/dags/{MIGRATE}/dagRuns/{run_id}/taskInstances/approval/-1/hitlDetails", headers=headers)
            assert answer.status_code == 200, f"{answer.status_code} {answer.text}"
            return answer.json()
        assert not {"failed", "upstream_failed"} & set(states.values()), f"{MIGRATE} run failed: {states}\n{live.task_problems(run_id)}"
        time.sleep(1)
    raise AssertionError(f"the approval of {run_id} did not wait for input within {timeout} s: {states}")


def show_required_action(driver, live: LiveAirflow, run_id: str, screenshot: pathlib.Path) -> str:
    """Airflow's page for the approval (the link the operator makes): its text, and a screenshot."""
    from selenium.webdriver.common.by import By

    driver.get(f"{live.url}/dags/{MIGRATE}/runs/{run_id}/tasks/approval/required_actions?map_index=-1")
    wait = page_wait(driver)
    wait.until(
        lambda d: (
            "Reject" in d.find_element(By.TAG_NAME, "body").text and "MODIFY COLUMN tier INT" in d.find_element(By.TAG_NAME, "body").text
        )
    )
    time.sleep(1)  # let the page finish painting
    assert driver.save_screenshot(str(screenshot)), f"no screenshot written to {screenshot}"
    return driver.find_element(By.TAG_NAME, "body").text


def open_schema_changes_page(driver, live: LiveAirflow, job_id: int, screenshot: pathlib.Path) -> dict:
    """The Schema changes page: the job's row, the Migrations section and the screenshots (the
    page, and the page scrolled to the Migrations section beside it)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    driver.get(f"{live.url}/plugin/schema-changes")
    wait = page_wait(driver)
    wait.until(ready.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, "iframe")))
    row = wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, f'table#jobs tr.job[data-job-id="{job_id}"]')))
    found = {
        "state": row.get_attribute("data-state"),
        "table": row.get_attribute("data-table"),
        "text": row.text,
        "rows": len(driver.find_elements(By.CSS_SELECTOR, "table#jobs tr.job")),
        "migrations": driver.execute_script(
            "return [...document.querySelectorAll('#migrations tr.migration')].map(r => [r.dataset.script, r.dataset.state]);"
        ),
        "pending": driver.execute_script(
            "return [...document.querySelectorAll('#pending-lint tr.pending')].map(r => [r.dataset.script, r.dataset.kind,"
            " [...r.querySelectorAll('.finding')].map(f => f.dataset.level + ' ' + f.dataset.rule).join()]);"
        ),
    }
    driver.switch_to.default_content()
    time.sleep(1)  # let the navigation finish painting
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(screenshot)), f"no screenshot written to {screenshot}"
    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe"))
    driver.execute_script("document.getElementById('migrations').scrollIntoView();")
    driver.switch_to.default_content()
    time.sleep(0.5)
    section = screenshot.with_name("schema-changes-migrations.png")
    assert driver.save_screenshot(str(section)), f"no screenshot written to {section}"
    return found


def test_a_teams_airflow_under_a_url_path_runs_alters_migrations_and_loads_and_shows_them(airflow: LiveAirflow, tmp_path):
    assert airflow.url.endswith("/af")
    _scenario(airflow, tmp_path)
    _under_a_url_path(airflow)
    _the_airflow_benchmark_runs_here(airflow)


def _the_airflow_benchmark_runs_here(live: LiveAirflow) -> None:
    """`bench.airflow_runs` with --quick's sizes on this Airflow: the benchmarks' smoke test
    (tests/test_bench_smoke.py) leaves it out rather than start an Airflow of its own."""
    from bench import airflow_runs

    (row,) = airflow_runs.measure(live, quick=True)
    assert row.benchmark == "Airflow DAG run" and row.result.startswith("median ") and "(heavy/light)" in row.ratio, row


def _scenario(live: LiveAirflow, tmp_path: pathlib.Path) -> None:
    started = time.monotonic()

    def phase(name: str) -> None:
        print(f"[{time.monotonic() - started:6.1f} s] {name}", flush=True)

    # The api-server's migrations directory (its working directory's ./migrations).
    migrations = live.base / "migrations"
    migrations.mkdir()
    for name, text in MIGRATIONS.items():
        (migrations / name).write_text(text)
    # Tables first (plain CLI, embedded), while Airflow starts.
    sql(
        live,
        "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2; "
        "INSERT INTO orders VALUES (1, '10'), (2, '25'), (3, '-7'); "
        "CREATE TABLE events (id INT NOT NULL, kind STRING, PRIMARY KEY (id)); "
        "INSERT INTO events VALUES (1, 'click'); "
        f"CREATE TABLE {SALES} (id INT NOT NULL, amount STRING, PRIMARY KEY (id)); "
        "CREATE TABLE burst (id INT NOT NULL, v INT, PRIMARY KEY (id)); "
        "INSERT INTO burst VALUES (1, 1), (2, 2)",
    )
    migrate(live, migrations, "apply", "--to", "1")  # applied earlier, from the CLI: V2 and V3 pending
    phase("tables created")
    live.wait_healthy()
    phase("Airflow healthy")
    token = live.token()
    headers = {"Authorization": f"Bearer {token}"}
    assert live.call("GET", "/api/v2/dags").status_code == 401, "the REST API must need a token"
    dag = wait_for_dag(live, headers)
    assert dag["is_paused"] is False
    phase("DAG parsed")

    # A heavyweight ALTER through the REST API (the form's params as the run's conf).
    conf = {"table": "orders", "statement": "ALTER TABLE orders MODIFY COLUMN amount INT", "properties": {}}
    answer = live.call(
        "POST", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, json={"dag_run_id": HEAVY_RUN, "logical_date": None, "conf": conf}
    )
    if answer.status_code == 409:  # a repeat after an answer lost to a timeout: the first attempt made it
        answer = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{HEAVY_RUN}", headers=headers)
        assert answer.status_code == 200 and answer.json()["conf"] == conf, f"{answer.status_code} {answer.text}"
    assert answer.status_code == 200, f"trigger: {answer.status_code} {answer.text}"

    heavy = wait_for_run(live, headers, HEAVY_RUN)
    phase("heavy DAG run succeeded")
    # 3 rows: the local engine, every step in the run's first task, validate, as no other task of
    # the DAG waited for a slot (the light ALTER below comes after it: while one waits, the rewrite
    # goes on in rewrite_in_worker, `ValidateRunOperator.slots_wanted`, and this run raced it)
    later = ("plan", "start", "rewrite_in_worker", "done", "commit")
    assert heavy["tasks"].get("validate") == "success", heavy["tasks"]
    assert {t: heavy["tasks"].get(t) for t in later} == dict.fromkeys(later, "skipped"), heavy["tasks"]

    # A lightweight ALTER of another table through the CLI, submitted to the same Airflow.
    cli_env = live.cli_env()
    cli_env.update(ALTERFLOW_AIRFLOW_URL=live.url, ALTERFLOW_AIRFLOW_USERNAME="admin", ALTERFLOW_AIRFLOW_PASSWORD=live.password)
    sql(live, "ALTER TABLE events ADD COLUMN source STRING DEFAULT 'web'", env=cli_env)
    phase("light ALTER done through the CLI")

    runs = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, params={"limit": 100}).json()
    by_table = {(r.get("conf") or {}).get("table"): r for r in runs["dag_runs"]}
    assert set(by_table) == {"orders", "events"}, f"expected one run per ALTER: {runs}"
    assert by_table["events"]["state"] == "success", by_table["events"]

    # The catalog, seen by the CLI: both changes committed; the rewrite passed its validation
    # (row counts per tablet, no value lost to the cast, ...), so every row was converted.
    results = sql(live, "SHOW ALTER TABLE COLUMN FROM orders; DESCRIBE orders; DESCRIBE events")
    jobs = rows_as_dicts(results[0])
    assert [j["State"] for j in jobs] == ["FINISHED"], jobs
    assert {r["Field"]: r["Type"] for r in rows_as_dicts(results[1])}["amount"] == "INT"
    events = {r["Field"]: r for r in rows_as_dicts(results[2])}
    assert list(events) == ["id", "kind", "source"] and events["source"]["Default"] == "web", events

    # The plugin's JSON API with the same token.
    api = live.call("GET", "/alterflow/api/jobs", headers=headers, params={"table": "orders"})
    assert api.status_code == 200, f"{api.status_code} {api.text}"
    job = api.json()["jobs"][0]
    assert (job["state"], job["kind"], job["table"]) == ("FINISHED", "HEAVY", "orders"), job
    assert "rows 3" in job["progress"] and "expectations passed" in job["msg"], job
    # An action of the plugin is in Airflow's audit log, read back through Airflow's REST API: a
    # cancel of the finished job (refused, 409, but recorded as an attempt, as Airflow's own API
    # records its actions). A POST a cross-site form could make is refused first, and not recorded.
    cancel = f"/alterflow/api/jobs/{job['job_id']}/cancel"
    assert live.call("POST", cancel, headers=headers, data={"x": "1"}).status_code == 403
    answer = live.call("POST", cancel, headers={**headers, "X-Alterflow-Request": "1"}, json={})
    assert answer.status_code == 409 and answer.json()["detail"].startswith(f"job {job['job_id']} is FINISHED"), answer.text
    audit = live.call("GET", "/api/v2/eventLogs", headers=headers, params={"event": "alterflow_cancel_job", "dag_id": DAG})
    assert audit.status_code == 200, f"{audit.status_code} {audit.text}"
    entries = audit.json()["event_logs"]  # more than one only if a lost answer made `call` repeat it
    assert entries and {(e["event"], e["owner"], e["dag_id"]) for e in entries} == {("alterflow_cancel_job", "admin", DAG)}, entries
    assert all(json.loads(e["extra"]) == {"table": "orders", "job_id": job["job_id"], "method": "POST"} for e in entries), entries
    phase("an action of the plugin is in Airflow's audit log")

    # The heavy ALTER's asset event ran the example downstream DAG scheduled on orders' asset.
    listened = wait_for_listener(live, headers)
    assert ["amount", "INT"] in [row[:2] for row in listened], listened
    phase("the downstream DAG ran on the asset event")

    phase("catalog checked")
    # A lightweight ALTER of SALES (waited for before the page): its schema-change event must not
    # make the load listener go on. Not at the start beside the first runs, the SQLite metadata
    # database's busiest moment (with a third run there, every component once stalled 60 s on its lock).
    sales_conf = {"table": SALES, "statement": f"ALTER TABLE {SALES} ADD COLUMN note STRING", "properties": {}}
    answer = live.call(
        "POST",
        f"/api/v2/dags/{DAG}/dagRuns",
        headers=headers,
        json={"dag_run_id": SALES_NOTE_RUN, "logical_date": None, "conf": sales_conf},
    )
    assert answer.status_code in (200, 409), f"trigger: {answer.status_code} {answer.text}"
    # Migrations: a run of alterflow_migrate up to V2, whose rewrite waits for a person's approval.
    conf = {"migrations_dir": str(migrations), "to": "2"}
    answer = live.call(
        "POST", f"/api/v2/dags/{MIGRATE}/dagRuns", headers=headers, json={"dag_run_id": MIGRATE_RUN, "logical_date": None, "conf": conf}
    )
    assert answer.status_code in (200, 409), f"trigger {MIGRATE}: {answer.status_code} {answer.text}"
    detail = wait_for_approval(live, headers, MIGRATE_RUN)
    assert detail["subject"] == f"Apply 1 pending migration statement(s) of {migrations}?", detail
    assert "`V2__customers_tier_to_int.sql` line 1: HEAVY (approve)" in detail["body"], detail["body"]
    assert "**Analysis on today's data:** every value converts" in detail["body"], detail["body"]
    assert [s["state"] for s in migrate_status(live, migrations)["migrations"]] == [
        "APPLIED",
        "PENDING",
        "PENDING",
    ]  # none before the answer
    phase("the migrate run waits for approval")
    wait_for_run(live, headers, SALES_NOTE_RUN)
    phase("the light ALTER of the example's table succeeded")
    check_a_refused_run(live, headers)
    phase("a refused run has its line as its note and is on the page")

    # In a real browser: a lightweight ALTER triggered from the DAG's form, the migrate run's
    # approval on Airflow's Required Actions page (granted through the REST API), then the Schema
    # changes page.
    screenshot = pathlib.Path(os.environ.get("ALTERFLOW_SCREENSHOT") or tmp_path / "schema-changes.png")
    form_shot = screenshot.with_name("trigger-form.png")
    approval_shot = screenshot.with_name("migrate-approval.png")
    with browser(live, token) as driver:
        form_run = trigger_from_the_form(driver, live, "events", "ALTER TABLE events ADD COLUMN clicks INT DEFAULT 0", form_shot)
        phase(f"triggered {form_run} from the form")
        light = wait_for_run(live, headers, form_run)
        tasks_of_light = light["tasks"]  # a light change is committed by validate
        assert (tasks_of_light.get("validate"), tasks_of_light.get("commit")) == ("success", "skipped"), tasks_of_light
        conf = light["run"]["conf"]  # the form's: the statement names the table
        assert conf["statement"] == "ALTER TABLE events ADD COLUMN clicks INT DEFAULT 0" and "table" not in conf, light["run"]
        phase("form-triggered DAG run succeeded")

        shown = show_required_action(driver, live, MIGRATE_RUN, approval_shot)
        assert "Approve" in shown and f"Apply 1 pending migration statement(s) of {migrations}?" in shown, shown
        answer = live.call(
            "PATCH",
            f"/api/v2/dags/{MIGRATE}/dagRuns/{MIGRATE_RUN}/taskInstances/approval/-1/hitlDetails",
            headers=headers,
            json={"chosen_options": ["Approve"], "params_input": {}},
        )
        assert answer.status_code == 200 and answer.json()["responded_by"]["name"] == "admin", f"{answer.status_code} {answer.text}"
        migrated = wait_for_run(live, headers, MIGRATE_RUN, dag=MIGRATE)
        assert migrated["tasks"] == {"lint": "success", "needs_approval": "success", "approval": "success", "apply": "success"}
        phase("the migrate run was approved through the REST API and applied V2")
        found = open_schema_changes_page(driver, live, job["job_id"], screenshot)
    assert (found["state"], found["table"]) == ("FINISHED", "orders"), found
    assert found["rows"] == 5, f"the heavy jobs of orders and customers and the three light ones should be listed: {found}"
    scripts = list(MIGRATIONS)
    assert found["migrations"] == [[scripts[0], "APPLIED"], [scripts[1], "APPLIED"], [scripts[2], "PENDING"]], found
    assert found["pending"] == [[scripts[2], "LIGHT", ""], [scripts[2], "LIGHT", "warning drop_column"]], found
    status = migrate_status(live, migrations)
    assert [s["state"] for s in status["migrations"]] == ["APPLIED", "APPLIED", "PENDING"], status
    assert status["migrations"][1]["installed_by"] == "admin (approved by admin)", status
    customers = {r["Field"]: r["Type"] for r in rows_as_dicts(sql(live, "DESCRIBE customers")[0])}
    assert customers == {"id": "INT", "name": "STRING", "tier": "INT"}, customers  # V3 is not applied
    for shot in (screenshot, form_shot, approval_shot, screenshot.with_name("schema-changes-migrations.png")):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
    events = {r["Field"]: r for r in rows_as_dicts(sql(live, "DESCRIBE events")[0])}
    assert (events["clicks"]["Type"], events["clicks"]["Default"]) == ("INT", "0"), events
    phase(f"page checked in Chromium, screenshots {screenshot} and {form_shot}")

    # examples/dags: loads of SALES (a file and a DataFrame, AlterflowLoadOperator) side by side with
    # a heavy ALTER of it (AlterflowSchemaChangeOperator), then the listener of its loads.
    conf = {"rows": ROWS_PER_LOAD, "drop_folder": str(live.base)}
    answer = live.call(
        "POST", f"/api/v2/dags/{LOADS}/dagRuns", headers=headers, json={"dag_run_id": LOADS_RUN, "logical_date": None, "conf": conf}
    )
    assert answer.status_code in (200, 409), f"trigger {LOADS}: {answer.status_code} {answer.text}"
    loaded = wait_for_run(live, headers, LOADS_RUN, dag=LOADS)
    assert set(loaded["tasks"].values()) == {"success"}, loaded["tasks"]
    counted = xcom(live, headers, LOADS, LOADS_RUN, "count_rows")
    assert counted == {"rows": 2 + 2 * ROWS_PER_LOAD, "distinct_ids": 2 + 2 * ROWS_PER_LOAD, "amount": "INT"}, counted
    phase("loads beside a heavy ALTER of the same table: every row once, converted")
    runs = wait_for_load_listener(live, headers, loads=2)
    for run in runs:
        loads = [e["extra"] for e in run["events"] if e["extra"].get("event") == "load"]
        if loads:
            assert run["tasks"] == {"a_load_landed": "success", "count_loaded_rows": "success"}, run
            counted = xcom(live, headers, LOAD_LISTENER, run["dag_run_id"], "count_loaded_rows")
            assert counted["rows"] == sum(e["rows"] for e in loads), (counted, run)
        else:  # schema changes only (the light ALTER of SALES, and the heavy one unless a load came with it)
            assert {e["extra"]["event"] for e in run["events"]} <= {"schema_change"}, run  # none: its events passed over
            assert run["tasks"] == {"a_load_landed": "success", "count_loaded_rows": "skipped"}, run
    assert any(not any(e["extra"]["event"] == "load" for e in run["events"]) for run in runs), runs
    phase(f"the load listener went on for the loads and stopped at the schema changes ({len(runs)} runs)")
    _runs_at_once_on_one_table(live, headers)
    phase("six runs triggered at once on one table took their turns: every change applied")


def _runs_at_once_on_one_table(live: LiveAirflow, headers: dict) -> None:
    """As a team triggers them: six runs on one table at once through the REST API. Each waits for
    its turn (the heavy change's job, the runs let through before it) and applies its change on
    the version the one before left; none fails with "one job per table" or "no longer current"."""
    from concurrent.futures import ThreadPoolExecutor

    def trigger(run_id: str, statement: str) -> None:
        body = {"dag_run_id": run_id, "logical_date": None, "conf": {"statement": statement}}
        answer = live.call("POST", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, json=body)
        assert answer.status_code in (200, 409), f"trigger {run_id}: {answer.status_code} {answer.text}"

    with ThreadPoolExecutor(len(BURST)) as pool:
        list(pool.map(lambda item: trigger(*item), BURST))
    for run_id, _ in BURST:
        wait_for_run(live, headers, run_id)
    results = sql(live, "SHOW ALTER TABLE COLUMN FROM burst; DESCRIBE burst; SELECT id, v, c0, c1, c2, c3, c4 FROM burst ORDER BY id")
    assert [j["State"] for j in rows_as_dicts(results[0])] == ["FINISHED"] * len(BURST), results[0]
    columns = {r["Field"]: r["Type"] for r in rows_as_dicts(results[1])}
    assert columns == {"id": "INT", "v": "SMALLINT", **{f"c{n}": "INT" for n in range(5)}}, columns
    assert [list(row.values()) for row in rows_as_dicts(results[2])] == [[1, 1, 0, 1, 2, 3, 4], [2, 2, 0, 1, 2, 3, 4]], results[2]


def _under_a_url_path(live: LiveAirflow) -> None:
    """Behind a reverse proxy at /af: the CLI's ALTER runs as a DAG run through the prefixed REST
    API, the navigation's link and icon resolve under /af, the page loads in Airflow's frame, and
    the signed-out page sends the user to Airflow's sign-in under /af."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    sql(live, "CREATE TABLE items (id INT NOT NULL, name STRING, PRIMARY KEY (id)); INSERT INTO items VALUES (1, 'a')")
    token = live.token()
    headers = {"Authorization": f"Bearer {token}"}

    def runs_of_items() -> list[dict]:
        runs = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, params={"limit": 100}).json()["dag_runs"]
        return [r for r in runs if (r.get("conf") or {}).get("table") == "items"]

    cli_env = live.cli_env()
    cli_env.update(ALTERFLOW_AIRFLOW_URL=live.url, ALTERFLOW_AIRFLOW_USERNAME="admin", ALTERFLOW_AIRFLOW_PASSWORD=live.password)
    sql(live, "ALTER TABLE items ADD COLUMN qty INT DEFAULT 1", env=cli_env)
    runs = runs_of_items()
    assert [r["state"] for r in runs] == ["success"], runs
    rows = sql(live, "SELECT id, name, qty FROM items")[0]["rows"]
    assert rows == [[1, "a", 1]], rows

    # migrate apply of the scenario's pending V3 through the same Airflow, killed (-9) after its first
    # ALTER's DAG run ended but before that statement was recorded: the next apply finds the run's
    # job by the run id, runs nothing again, and goes on with the file's second statement.
    migrations = live.base / "migrations"
    command = [str(BIN / "alterflow"), "migrate", "--dir", str(migrations), "apply"]
    killed = subprocess.run(
        command, env={**cli_env, "ALTERFLOW_CRASH_AT": "migrate_statement_ran"}, capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == -9, killed
    again = subprocess.run(command, env=cli_env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    jobs = live.call("GET", "/alterflow/api/jobs", headers=headers, params={"table": "customers"}).json()["jobs"]
    email_job = [j["job_id"] for j in jobs if j["statement"] == "ALTER TABLE customers ADD COLUMN email STRING"]
    assert len(email_job) == 1, jobs  # the killed apply's run made it; the second apply found it
    found = f"V3__customers_email.sql:1 ALTER TABLE customers: job {email_job[0]} FINISHED, schema version 3 (found done)"
    assert found in again.stdout, again.stdout
    runs = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, params={"limit": 100}).json()["dag_runs"]
    statements = [(r.get("conf") or {}).get("statement") for r in runs]
    assert statements.count("ALTER TABLE customers ADD COLUMN email STRING") == 1, statements
    assert statements.count("ALTER TABLE customers DROP COLUMN name") == 1, statements
    assert [s["state"] for s in migrate_status(live, migrations)["migrations"]] == ["APPLIED"] * 3

    # The Python API's alter through the same Airflow: a DAG run of its own, followed by the handle.
    code = (
        "import alterflow; t = alterflow.connect().table('items'); "
        "job = t.alter('ADD COLUMN note STRING', timeout=600); done = job.wait(timeout=240); "
        "print(done.state, done.to_version, job.request.request_id)"
    )
    api = subprocess.run([str(BIN / "python"), "-c", code], env=cli_env, capture_output=True, text=True, timeout=300)
    assert api.returncode == 0, api.stderr
    state, version, run_id = api.stdout.split()
    assert (state, version) == ("FINISHED", "3"), api.stdout
    run = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}", headers=headers).json()
    assert (run["state"], run["conf"]["statement"]) == ("success", "ALTER TABLE items ADD COLUMN note STRING"), run

    signed_out = live.call("GET", "/alterflow/")
    assert signed_out.status_code == 401
    assert 'href="/af/auth/login?next=%2Faf%2Fplugin%2Fschema-changes"' in signed_out.text, signed_out.text

    with browser(live, token) as driver:
        wait = page_wait(driver)
        driver.get(f"{live.url}/")
        link = wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, 'a[href$="plugin/schema-changes"]')))
        assert link.get_attribute("href") == f"{live.url}/plugin/schema-changes"
        # The icon is fetched after the link renders: wait for the browser to finish with it (loaded
        # or failed, both set `complete`), then check that it loaded.
        icons = wait.until(
            lambda d: d.execute_script(
                "const icons = [...document.images].filter(i => i.src.endsWith('/schema_changes.svg'));"
                "return icons.length && icons.every(i => i.complete) && icons.map(i => [i.src, i.naturalWidth > 0])"
            )
        )
        assert icons == [[f"{live.url}/alterflow/static/schema_changes.svg", True]], icons
        link.click()
        wait.until(ready.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, "iframe")))
        row = wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, 'table#jobs tr.job[data-table="items"]')))
        assert row.get_attribute("data-state") == "FINISHED"
        assert driver.execute_script("return location.href") == f"{live.url}/alterflow/"
