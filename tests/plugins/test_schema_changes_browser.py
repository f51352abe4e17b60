"""The page's script in a real browser: headless Chromium (Debian's chromium and chromedriver, as
`make browser` installs them) on the plugin's app served by uvicorn, signed in with Airflow's
`_token` cookie holding a JWT from Airflow's auth manager. Cancel asks first and does nothing when
declined; accepted, it calls the API with the cookie and the page shows the job CANCELLED; the
jobs refresh in place while one is unfinished; a refused action shows the API's one line."""

from __future__ import annotations

import os
import pathlib
import threading
import time

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.ports import free_port

CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMEDRIVER = pathlib.Path("/usr/bin/chromedriver")


def start_heavy(session, statement: str) -> int:
    request = AlterRequest(statement.split()[2], statement, {})
    validated = alter_steps.validate(session.catalog, request)
    return heavy_steps.start(session.catalog, request, validated).job_id


@pytest.fixture
def served(auth_manager, alterflow_env):
    """The plugin's app mounted at /alterflow (as Airflow's init_plugins does), served by uvicorn."""
    import uvicorn
    from fastapi import FastAPI

    from alterflow.airflow.plugin import AlterflowPlugin

    root = FastAPI()
    for spec in AlterflowPlugin().fastapi_apps:
        root.mount(spec["url_prefix"], spec["app"])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(root, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def browser():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        message = "Debian's chromium and chromium-driver are not installed: run `make browser`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.mark.parametrize("catalog_url", ["sqlite"], indirect=True)  # the script is what is tested here
def test_cancel_in_the_browser_and_live_refresh(plugin_session, served, browser, mint):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    s = plugin_session
    for table in ("t", "u"):
        list(s.run(f"CREATE TABLE {table} (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO {table} VALUES (1, '1')"))
    job_a = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    job_b = start_heavy(s, "ALTER TABLE u MODIFY COLUMN v INT")
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    # The live refresh replaces the jobs table every few seconds: an element found just before
    # may be gone, so look again. Reads go through one script each, which the refresh cannot
    # split; a click needs the element, and chromedriver reports a row replaced under it either
    # as a stale reference or as an inspector error about a node no longer in the document.
    wait = WebDriverWait(browser, 20, ignored_exceptions=[StaleElementReferenceException])

    def row(job_id: int):
        return browser.find_element(By.CSS_SELECTOR, f'#jobs tr.job[data-job-id="{job_id}"]')

    def state_of(job_id: int) -> str | None:
        return browser.execute_script(
            "const row = document.querySelector(`#jobs tr.job[data-job-id='${arguments[0]}']`);return row ? row.dataset.state : null;",
            job_id,
        )

    def buttons_of(job_id: int) -> list[str]:
        return browser.execute_script(
            "return [...document.querySelectorAll(`#jobs tr.job[data-job-id='${arguments[0]}'] button[data-action]`)]"
            ".map(button => button.dataset.action);",
            job_id,
        )

    def pressed(job_id: int, action: str):
        def press(_):
            try:
                row(job_id).find_element(By.CSS_SELECTOR, f'button[data-action="{action}"]').click()
            except WebDriverException as error:
                if "does not belong to the document" in str(error):
                    return False  # replaced by the refresh between finding and clicking
                raise
            return True

        return press

    def click(job_id: int, action: str):
        wait.until(pressed(job_id, action))
        return wait.until(EC.alert_is_present())

    browser.get(f"{served}/alterflow/static/schema_changes.css")  # the cookie's site
    browser.add_cookie({"name": "_token", "value": mint("alice", "admin"), "path": "/"})
    browser.get(f"{served}/alterflow/")
    assert browser.find_element(By.ID, "user").text == "alice"
    assert (state_of(job_a), state_of(job_b)) == ("PENDING", "PENDING")
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-refresh") == "on"

    # Analyze: EXPLAIN ANALYZE of the job's conversion in the notice line, no question asked.
    wait.until(pressed(job_a, "analyze"))
    wait.until(lambda _: browser.find_element(By.ID, "notice").text.startswith(f"Job {job_a} on t: 1 rows, every value converts; about "))

    # Declined: nothing happens.
    alert = click(job_b, "cancel")
    assert alert.text.startswith(f"Cancel job {job_b} on u?")
    alert.dismiss()
    assert HeavyJobs(s.catalog).job(job_b).state == "PENDING"

    # Accepted: the API cancels the job with the signed-in user's name; the page shows it.
    click(job_a, "cancel").accept()
    wait.until(lambda _: state_of(job_a) == "CANCELLED")
    assert browser.find_element(By.ID, "notice").text == f"Job {job_a} is CANCELLED."
    wait.until(lambda _: buttons_of(job_a) == [])
    job = HeavyJobs(s.catalog).job(job_a)
    assert (job.state, job.msg) == ("CANCELLED", "cancelled by alice on the Schema changes page")

    # Live refresh: job B cancelled elsewhere (SQL) shows up without reloading the page.
    browser.execute_script("window.alterflowNotReloaded = true;")
    list(s.run("CANCEL ALTER TABLE COLUMN FROM u"))
    wait.until(lambda _: state_of(job_b) == "CANCELLED")
    assert browser.execute_script("return window.alterflowNotReloaded === true;")
    wait.until(lambda _: browser.find_element(By.TAG_NAME, "body").get_attribute("data-refresh") == "off")

    # A stale button: the API's refusal is shown as its one line, and nothing changes.
    job_c = start_heavy(s, "ALTER TABLE t MODIFY COLUMN v INT")
    browser.get(f"{served}/alterflow/")
    browser.execute_script("document.body.dataset.refresh = 'off';")  # keep the stale row
    list(s.run("CANCEL ALTER TABLE COLUMN FROM t"))
    click(job_c, "cancel").accept()
    notice = browser.find_element(By.ID, "notice")
    wait.until(lambda _: notice.is_displayed())
    assert notice.text == f"job {job_c} is CANCELLED; only an unfinished job can be cancelled"
    assert "error" in notice.get_attribute("class").split()
    wait.until(lambda _: row(job_c).find_element(By.CSS_SELECTOR, 'button[data-action="cancel"]').is_enabled())
    assert HeavyJobs(s.catalog).job(job_c).msg == "cancelled by CANCEL ALTER TABLE COLUMN"

    # Revert to an older version: declined, nothing; accepted, a run of the schema-change DAG
    # starts (planned first) and the page says which.
    from airflow.models import DagRun

    from tests.support.dags import sync_dags_to_airflow

    sync_dags_to_airflow()
    runs = len(DagRun.find(dag_id="alterflow_schema_change"))
    list(s.run("ALTER TABLE u ADD COLUMN extra INT"))
    browser.get(f"{served}/alterflow/")
    revert = 'article[data-table="u"] details.version[data-version="1"] button[data-action="revert"]'
    browser.find_element(By.CSS_SELECTOR, revert).click()
    question = wait.until(EC.alert_is_present())
    assert question.text.startswith("Revert u to version 1?")
    question.dismiss()
    assert len(DagRun.find(dag_id="alterflow_schema_change")) == runs
    browser.find_element(By.CSS_SELECTOR, revert).click()
    wait.until(EC.alert_is_present()).accept()
    wait.until(lambda _: "REVERT TO VERSION 1: run" in browser.find_element(By.ID, "notice").text)
    assert browser.find_element(By.ID, "notice").text.startswith("ALTER TABLE u REVERT TO VERSION 1: run alterflow__")
    assert len(DagRun.find(dag_id="alterflow_schema_change")) == runs + 1

    # No job on the page is unfinished, yet it stays live until the run's job has appeared: the run
    # (here its tasks' steps, run in-process with its id) makes the job, and the row shows up
    # without a reload of the page.
    [run] = [r for r in DagRun.find(dag_id="alterflow_schema_change") if r.run_id in browser.find_element(By.ID, "notice").text]
    browser.execute_script("window.alterflowNotReloaded = true;")
    request = AlterRequest(run.conf["table"], run.conf["statement"], {}, request_id=run.run_id)
    job_id = alter_steps.commit(s.catalog, request, alter_steps.validate(s.catalog, request)).job_id
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, f'table#jobs tr.job[data-job-id="{job_id}"]'))
    assert browser.execute_script("return window.alterflowNotReloaded === true;"), "the page reloaded"
    wait.until(lambda _: browser.execute_script("return sessionStorage.getItem('alterflow.await') === null;"))  # settled: refresh stops


@pytest.mark.parametrize("catalog_url", ["sqlite"], indirect=True)
def test_the_migrations_section_in_the_browser_survives_the_live_refresh(
    plugin_session, served, browser, mint, tmp_path, monkeypatch, no_migrate_runs
):
    """The Migrations section (files, states, the pending lint) as a browser shows it, its link to the
    alterflow_migrate DAG leaving Airflow's frame, and the live refresh of the jobs leaving it in place."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from alterflow.migrate.apply import MigrationApply

    s = plugin_session
    directory = tmp_path / "migrations"
    directory.mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "approve"\n')  # the project's rules
    (directory / "V1__orders.sql").write_text("CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id));\n")
    (directory / "V2__rows.sql").write_text("INSERT INTO orders VALUES (1, '10');\n")
    MigrationApply(s, directory, who="alice@laptop", on_line=lambda _line: None).run()
    (directory / "V3__amount_int.sql").write_text("ALTER TABLE orders MODIFY COLUMN amount INT;\n")
    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", str(directory))
    list(s.run("CREATE TABLE events (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO events VALUES (1, '1')"))
    job = start_heavy(s, "ALTER TABLE events MODIFY COLUMN v INT")  # unfinished: the page refreshes

    browser.get(f"{served}/alterflow/static/schema_changes.css")
    browser.add_cookie({"name": "_token", "value": mint("alice", "admin"), "path": "/"})
    browser.get(f"{served}/alterflow/")
    read = (
        "return [...document.querySelectorAll('#migrations tr.migration')].map(r => [r.dataset.script, r.dataset.state])"
        ".concat([...document.querySelectorAll('#pending-lint tr.pending')].map(r => [r.dataset.script, r.dataset.kind,"
        " [...r.querySelectorAll('.finding')].map(f => f.dataset.level + ' ' + f.dataset.rule).join()]));"
    )
    shown = [
        ["V1__orders.sql", "APPLIED"],
        ["V2__rows.sql", "APPLIED"],
        ["V3__amount_int.sql", "PENDING"],
        ["V3__amount_int.sql", "HEAVY", "approve rewrite"],
    ]
    assert browser.execute_script(read) == shown
    section = browser.find_element(By.ID, "migrations")
    assert section.is_displayed() and "Migrations" in section.find_element(By.TAG_NAME, "h2").text
    link = section.find_element(By.LINK_TEXT, "alterflow_migrate")
    assert (link.get_attribute("href"), link.get_attribute("target")) == (f"{served}/dags/alterflow_migrate", "_top")

    # The jobs refresh in place (the job cancelled elsewhere shows up); the section stays as it was.
    browser.execute_script("window.alterflowNotReloaded = true;")
    list(s.run("CANCEL ALTER TABLE COLUMN FROM events"))
    wait = WebDriverWait(browser, 20)
    wait.until(
        lambda _: (
            browser.execute_script(f"return document.querySelector('#jobs tr.job[data-job-id=\"{job}\"]').dataset.state") == "CANCELLED"
        )
    )
    assert browser.execute_script("return window.alterflowNotReloaded === true;")
    assert browser.execute_script(read) == shown


@pytest.mark.parametrize("catalog_url", ["sqlite"], indirect=True)
def test_a_run_failed_at_plan_and_a_jobs_failure_line_as_the_browser_shows_them(plugin_session, served, browser, mint, airflow_db):
    """A run of the DAG that failed at plan (no job) is listed with its line and a link to the run;
    a heavy job whose every value fails shows its failure line in the user's words."""
    from selenium.webdriver.common.by import By

    from alterflow.engine.session import StatementError
    from tests.support.dags import SCHEMA_CHANGE, load_dag, run_dag
    from tests.support.statements import sql

    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, customer STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, 'cust1'), (2, 'cust2')")
    state, states, run = run_dag(load_dag(SCHEMA_CHANGE), {"statement": "ALTER TABLE t DROP COLUMN id"})
    assert (state, states["validate"], states["plan"]) == ("failed", "success", "failed"), states
    with pytest.raises(StatementError):
        sql(s, 'ALTER TABLE t MODIFY COLUMN customer BIGINT PROPERTIES ("engine" = "local")')
    [job] = s.catalog.jobs(s.catalog.table("t").id)

    browser.get(f"{served}/alterflow/static/schema_changes.css")  # the cookie's site
    browser.add_cookie({"name": "_token", "value": mint("alice", "admin"), "path": "/"})
    browser.get(f"{served}/alterflow/?table=t")
    failed = browser.find_element(By.CSS_SELECTOR, f'#failed-runs tr.failed-run[data-run-id="{run.run_id}"]')
    assert failed.is_displayed()
    assert "ALTER TABLE t: cannot drop column id: it is a primary-key column" in failed.text, failed.text
    assert "/dags/alterflow_schema_change/runs/" in failed.find_element(By.TAG_NAME, "a").get_attribute("href")
    msg = browser.find_element(By.CSS_SELECTOR, f'#jobs tr.job[data-job-id="{job.id}"] td.msg').text
    assert msg == "validation failed: 2 of 2 values of customer do not convert to BIGINT, e.g. 'cust1' (id=1), 'cust2' (id=2)", msg
