// The Schema changes page: Cancel / Resume / Revert to this version through the JSON API (the Airflow
// session cookie authenticates the call; a POST is JSON with the header X-Alterflow-Request), a table
// filter, live refresh of the jobs while one is unfinished (and after an action that starts a run,
// until its job has settled), and Airflow's colour mode when shown inside its UI.
(() => {
  "use strict";
  const body = document.body;
  const api = body.dataset.api;
  const notice = document.getElementById("notice");
  const REFRESH_MS = 5000;
  // After an action that starts a DAG run (Revert, the Resume of an orphaned job), the page keeps
  // refreshing until the run's job has appeared and settled (or AWAIT_MS passed), though no job
  // on the page is unfinished yet when it reloads.
  const AWAIT_KEY = "alterflow.await";
  const AWAIT_MS = 10 * 60 * 1000;
  function awaited() {
    const wait = JSON.parse(sessionStorage.getItem(AWAIT_KEY) || "null");
    if (wait && Date.now() > wait.until) sessionStorage.removeItem(AWAIT_KEY);
    return wait && Date.now() <= wait.until ? wait : null;
  }
  function newestJobId(doc) {
    const row = doc.querySelector("table#jobs tr.job");
    return row ? Number(row.dataset.jobId) : 0;
  }
  // The awaited run has settled: it failed before making a job (listed among the failed runs), the
  // job it took over has ended, or a newer job has appeared and nothing is unfinished any more.
  function settled(wait) {
    const failed = [...document.querySelectorAll("tr.failed-run")].some((row) => row.dataset.runId === wait.run);
    const job = wait.job ? document.querySelector(`table#jobs tr.job[data-job-id="${wait.job}"]`) : null;
    const ended = job && ["FINISHED", "CANCELLED"].includes(job.dataset.state);
    return failed || ended || (!wait.job && body.dataset.refresh === "off" && newestJobId(document) > wait.after);
  }
  function refreshing() {
    return body.dataset.refresh === "on" || Boolean(awaited());
  }

  // Follow Airflow's light / dark mode (the page is a same-origin iframe of its UI).
  try {
    const parentRoot = window.parent !== window ? window.parent.document.documentElement : null;
    if (parentRoot) {
      const dark = parentRoot.classList.contains("dark") || parentRoot.dataset.theme === "dark";
      document.documentElement.dataset.theme = dark ? "dark" : "light";
    }
  } catch (_) { /* not embedded, or another origin: the system preference applies */ }

  function show(text, isError) {
    if (!notice) return;
    notice.textContent = text;
    notice.classList.toggle("error", Boolean(isError));
    notice.hidden = false;
  }

  const remembered = sessionStorage.getItem("alterflow.notice");
  if (remembered) {
    sessionStorage.removeItem("alterflow.notice");
    show(remembered, false);
  }

  const filter = document.getElementById("table-filter");
  if (filter) filter.addEventListener("change", () => filter.form.submit());

  const QUESTIONS = {
    cancel: (b) => `Cancel job ${b.dataset.jobId} on ${b.dataset.table}? Its shadow index and pending schema version are dropped; the table stays as it is.`,
    resume: (b) => b.dataset.orphaned === "true"
      ? `Resume job ${b.dataset.jobId} on ${b.dataset.table}? Its runner is gone; a new alterflow_schema_change run takes it over and drives it on from where it stopped.`
      : `Resume job ${b.dataset.jobId} on ${b.dataset.table}? Schema version ${b.dataset.version} and the converted data become current.`,
    revert: (b) => `Revert ${b.dataset.table} to version ${b.dataset.version}? An alterflow_schema_change run presents version ${b.dataset.version} again as version ${Number(b.dataset.currentVersion) + 1} (ALTER TABLE ${b.dataset.table} REVERT TO VERSION ${b.dataset.version}).`,
  };
  // Where each action posts, and what the notice says once it is accepted.
  const ENDPOINTS = {
    revert: (b) => `${api}/tables/${encodeURIComponent(b.dataset.table)}/versions/${encodeURIComponent(b.dataset.version)}/revert`,
  };
  const DONE = {
    revert: (answer) => `${answer.statement}: run ${answer.dag_run_id} of alterflow_schema_change started (${answer.kind}).`,
  };

  // Analyze: EXPLAIN ANALYZE of a job's conversion, read-only, shown in the notice line.
  function analysisText(a) {
    const samples = Object.entries(a.columns).flatMap(([column, c]) => c.samples.map((s) =>
      `${column} ${JSON.stringify(s.value)}${s.key ? ` (${Object.entries(s.key).map(([k, v]) => `${k}=${v}`).join(", ")})` : ""}`));
    const failed = a.failed_casts === 0 ? "every value converts" : `${a.failed_casts} value${a.failed_casts === 1 ? "" : "s"} would not convert: ${samples.join("; ")}`;
    return `Job ${a.job_id} on ${a.table}: ${a.rows} rows, ${failed}; about ${a.est_seconds} s to convert.`;
  }
  async function analyze(button) {
    button.disabled = true;
    try {
      const response = await fetch(`${api}/jobs/${encodeURIComponent(button.dataset.jobId)}/analysis`, {
        credentials: "same-origin", headers: { Accept: "application/json" },
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) show(typeof answer.detail === "string" ? answer.detail : `${response.status} ${response.statusText}`, true);
      else show(analysisText(answer), false);
    } catch (error) {
      show(`The request failed: ${error}`, true);
    }
    button.disabled = false;
  }

  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "analyze") return analyze(button);
    if (!QUESTIONS[action] || !window.confirm(QUESTIONS[action](button))) return;
    event.preventDefault();  // a button inside <summary> would also open or close the version
    button.disabled = true;
    const endpoint = ENDPOINTS[action] ? ENDPOINTS[action](button) : `${api}/jobs/${encodeURIComponent(button.dataset.jobId)}/${action}`;
    try {
      // JSON with X-Alterflow-Request: what a cross-site form cannot send, so the API takes only this.
      const response = await fetch(endpoint, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json", "Content-Type": "application/json", "X-Alterflow-Request": "1" },
        body: "{}",
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        show(typeof answer.detail === "string" ? answer.detail : `${response.status} ${response.statusText}`, true);
        button.disabled = false;
        return;
      }
      if (answer.dag_run_id) {
        sessionStorage.setItem(AWAIT_KEY, JSON.stringify({
          until: Date.now() + AWAIT_MS, after: newestJobId(document), run: answer.dag_run_id, job: answer.job_id || null,
        }));
      }
      sessionStorage.setItem("alterflow.notice", DONE[action] ? DONE[action](answer) : answer.dag_run_id
        ? `Job ${answer.job_id} is taken over by run ${answer.dag_run_id} of alterflow_schema_change.`
        : `Job ${answer.job_id} is ${answer.state}.`);
      window.location.reload();
    } catch (error) {
      show(`The request failed: ${error}`, true);
      button.disabled = false;
    }
  });

  // While a job is unfinished, refresh the jobs (and the schema history when a version or job
  // changes) in place, keeping which versions are open.
  async function refresh() {
    if (!refreshing()) return;
    if (document.hidden || document.querySelector("button[data-action]:disabled")) return schedule();
    try {
      // The header: the jobs and the history only (the Migrations section is not refreshed).
      const response = await fetch(window.location.href, {
        credentials: "same-origin", headers: { Accept: "text/html", "X-Alterflow-Refresh": "1" },
      });
      if (!response.ok) return schedule();
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      const jobs = fresh.getElementById("jobs-section");
      if (jobs) document.getElementById("jobs-section").replaceWith(jobs);
      const history = fresh.getElementById("schema-history");
      const current = document.getElementById("schema-history");
      if (history && current && history.dataset.signature !== current.dataset.signature) {
        const open = new Set([...current.querySelectorAll("details.version[open]")].map(
          (d) => `${d.closest(".table-card").dataset.table}:${d.dataset.version}`));
        history.querySelectorAll("details.version").forEach((d) => {
          if (open.has(`${d.closest(".table-card").dataset.table}:${d.dataset.version}`)) d.open = true;
        });
        current.replaceWith(history);
      }
      body.dataset.refresh = fresh.body.dataset.refresh;
      const wait = awaited();
      if (wait && settled(wait)) sessionStorage.removeItem(AWAIT_KEY);
    } catch (_) { /* try again later */ }
    schedule();
  }
  function schedule() {
    if (refreshing()) window.setTimeout(refresh, REFRESH_MS);
  }
  schedule();
})();
