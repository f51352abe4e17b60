"""`alterflow migrate lint`: every pending statement planned in order (`alterflow.migrate.plan`),
checked against the project's rules (`alterflow.migrate.rules`), and with `analyze` the EXPLAIN
ANALYZE figures of each rewrite on today's data: every check the rewrite's validation will run
(`alterflow.rewrite.validation_checks`: failed casts, NOT NULL, primary-key uniqueness, ...) with
counts and samples, each failing one a finding of its rule, and the estimated seconds.
Changes nothing. Output as text, JSON, or GitHub annotations (`::error file=...,line=...::...`).

A statement's `-- alterflow:nolint RULE...` directives (`alterflow.migrate.nolint`) suppress those
rules' findings for it: they are listed as suppressed, not counted. The backward-incompatible rule
names the readers alterflow knows: views (`alterflow.migrate.plan`) and, with an Airflow to ask,
the DAGs scheduled on the table's asset (`alterflow.migrate.readers`).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.states import Engine
from alterflow.migrate.nolint import suppression_of
from alterflow.migrate.plan import HEAVY, REJECTED, StatementPlan, plan_pending
from alterflow.migrate.rules import LintRules
from alterflow.migrate.status import Drift, MigrationStatus, migration_status

if TYPE_CHECKING:  # httpx and the Airflow client load only when a lint asks Airflow
    from alterflow.migrate.readers import AirflowDagReaders


@dataclass(frozen=True)
class Readers:
    """Who reads what a backward-incompatible statement changes: views, and the DAGs on the table's
    asset (`asset`: None when no Airflow was asked)."""

    views: tuple[str, ...] = ()
    dags: tuple[str, ...] = ()
    asset: str | None = None

    def as_json(self) -> dict:
        return {"views": list(self.views), "dags": list(self.dags), "asset": self.asset}


@dataclass(frozen=True)
class Finding:
    rule: str
    level: str  # error, warning, approve
    message: str
    readers: Readers | None = None  # backward_incompatible: the readers it names

    def as_json(self) -> dict:
        found = {"rule": self.rule, "level": self.level, "message": self.message}
        if self.readers is not None:
            found["readers"] = self.readers.as_json()
        return found


@dataclass(frozen=True)
class SuppressedFinding:
    """A finding a `-- alterflow:nolint` directive suppressed: shown to a reviewer, not counted."""

    finding: Finding
    nolint_line: int  # the line of the (first) directive that suppresses it

    def as_json(self) -> dict:
        return {**self.finding.as_json(), "nolint_line": self.nolint_line}


@dataclass
class LintedStatement:
    plan: StatementPlan
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[SuppressedFinding] = field(default_factory=list)
    failed_casts: int | None = None  # None without analyze (or nothing to analyse)
    samples: list[dict] = field(default_factory=list)
    est_seconds: float | None = None
    engine: Engine | None = None
    checks: list[dict] | None = None  # with analyze: every validation check this statement's rewrite runs, evaluated

    def as_json(self, directory: str) -> dict:
        p = self.plan
        return {
            "script": p.script,
            "path": f"{directory}/{p.script}",
            "version": p.file.version,
            "line": p.statement.line,
            "position": p.statement.position,
            "statement": p.statement.text,
            "kind": p.kind,
            "reason": p.reason,
            "table": p.table,
            "rows": p.rows,
            "failed_casts": self.failed_casts,
            "samples": self.samples,
            "est_seconds": self.est_seconds,
            "checks": self.checks,
            "findings": [f.as_json() for f in self.findings],
            "suppressed": [f.as_json() for f in self.suppressed],
        }


@dataclass
class LintReport:
    directory: pathlib.Path
    statements: list[LintedStatement]
    drift: list[Drift]
    rules: LintRules
    drift_findings: list[tuple[str, Finding]] = field(default_factory=list)  # (script, finding)
    airflow_warning: str | None = None  # why the DAGs reading the tables could not be listed

    def count(self, level: str) -> int:
        return (
            sum(1 for s in self.statements for f in s.findings if f.level == level)
            + sum(1 for _script, f in self.drift_findings if f.level == level)
            + (1 if level == "warning" and self.airflow_warning else 0)
        )

    @property
    def suppressed(self) -> int:
        return sum(len(s.suppressed) for s in self.statements)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    @property
    def approvals(self) -> int:
        return self.count("approve")

    def as_json(self) -> dict:
        directory = str(self.directory)
        return {
            "statements": [s.as_json(directory) for s in self.statements],
            "drift": [d.as_json() for d in self.drift],
            "drift_findings": [{"script": script, **f.as_json()} for script, f in self.drift_findings],
            "errors": self.errors,
            "warnings": self.warnings,
            "approvals": self.approvals,
            "suppressed": self.suppressed,
            "airflow_warning": self.airflow_warning,
            "rules": {**self.rules.levels, "rewrite_rows_over_rows": self.rules.rows_over},
            "rules_from": self.rules.source,
        }

    def text(self) -> str:
        lines = []
        for s in self.statements:
            p = s.plan
            lines.append(f"{p.script}:{p.statement.line}  {' '.join(p.statement.text.split())[:160]}")
            extra = f"; {p.rows} rows" if p.kind == HEAVY else ""
            lines.append(f"  {p.kind:<8} {p.reason}{extra}")
            if s.failed_casts is not None:
                lines.append(
                    f"  analyze  {s.failed_casts} failed casts, est. {s.est_seconds} s on {s.engine}; samples {json.dumps(s.samples)}"
                )
                failing = [c for c in s.checks or [] if c["count"]]
                lines.append(f"  analyze  {len(s.checks or [])} validation check(s), {len(failing)} would fail on today's data")
                lines.extend(f"  analyze  {c['description']}: {c['count']} fail, e.g. {json.dumps(c['samples'])}" for c in failing)
            lines.extend(f"  {f.level:<8} {f.rule}: {f.message}" for f in s.findings)
            lines.extend(
                f"  {'nolint':<8} {x.finding.rule} ({x.finding.level}, suppressed at line {x.nolint_line}): {x.finding.message}"
                for x in s.suppressed
            )
        for script, f in self.drift_findings:
            lines.append(f"{script}  {f.level} {f.rule}: {f.message}")
        flagged = {(script, f.rule) for script, f in self.drift_findings}
        for d in self.drift:  # what is neither an error nor a warning: reported only
            if ((d.script or "", d.kind)) not in flagged:
                lines.append(f"drift    {d.kind}: {d.detail}")
        if self.airflow_warning:
            lines.append(f"warning  {self.airflow_warning}")
        lines.append(
            f"{len(self.statements)} pending statement(s): {self.errors} error(s), {self.warnings} warning(s), {self.approvals} to approve"
            + self._suppressed_note()
        )
        return "\n".join(lines)

    def _suppressed_note(self) -> str:
        return f", {self.suppressed} suppressed by alterflow:nolint" if self.suppressed else ""

    def github(self) -> str:
        """GitHub Actions workflow commands: each finding an annotation on its file and line."""
        kinds = {"error": "error", "warning": "warning", "approve": "notice"}
        lines = []
        for s in self.statements:
            path = f"{self.directory}/{s.plan.script}"
            for f in s.findings:
                lines.append(
                    f"::{kinds[f.level]} file={_property(path)},line={s.plan.statement.line},title={_property(f.rule)}::{_data(f.message)}"
                )
        for script, f in self.drift_findings:
            lines.append(f"::{kinds[f.level]} file={_property(f'{self.directory}/{script}')},title={_property(f.rule)}::{_data(f.message)}")
        if self.airflow_warning:
            lines.append(f"::warning title=airflow::{_data(self.airflow_warning)}")
        lines.append(
            f"alterflow migrate lint: {self.errors} error(s), {self.warnings} warning(s), {self.approvals} to approve"
            + self._suppressed_note()
        )
        return "\n".join(lines)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def findings_of(plan: StatementPlan, rules: LintRules) -> list[Finding]:
    """The findings of `plan` that count: those its `-- alterflow:nolint` directives leave."""
    suppression = suppression_of(plan.file, plan.statement.position)
    return [f for f in _plan_findings(plan, rules) if not suppression.covers(f.rule)]


def _plan_findings(plan: StatementPlan, rules: LintRules, dag_readers: AirflowDagReaders | None = None) -> list[Finding]:
    """Every finding of `plan` by the rules (before suppression); `dag_readers`: the Airflow to ask
    for the DAGs a backward-incompatible statement's table has."""
    found: list[tuple[str, str]] = []
    if plan.kind == REJECTED:
        found.append(("rejected", plan.reason))
    if plan.kind == HEAVY:
        found.append(("rewrite", f"rewrites the data of {plan.table} ({plan.rows} rows today) into a new index"))
        if plan.rows > rules.rows_over:
            found.append(("rewrite_rows_over", f"rewrites {plan.rows} rows of {plan.table}, over the rule's {rules.rows_over}"))
    if plan.dropped_columns:
        found.append(("drop_column", f"drops column {', '.join(plan.dropped_columns)} of {plan.table}"))
    if plan.dropped_table:
        found.append(("drop_table", f"drops table {plan.table}; its data goes once GC's retention passes"))
    if plan.alter is not None and plan.kind != REJECTED and not plan.guarded:
        found.append(("missing_expected_version", f'not guarded by PROPERTIES ("expected_version" = "{plan.alter.old.version}")'))
    findings = [Finding(rule, rules.level(rule), message) for rule, message in found if rules.level(rule) != "off"]
    if rules.level("backward_incompatible") != "off":
        incompatible = backward_incompatible(plan, dag_readers)
        if incompatible is not None:
            message, readers = incompatible
            findings.append(Finding("backward_incompatible", rules.level("backward_incompatible"), message, readers))
    return findings


def backward_incompatible(plan: StatementPlan, dag_readers: AirflowDagReaders | None = None) -> tuple[str, Readers] | None:
    """Atlas's BC101/BC102: a statement after which readers of the table as it was break. A column
    rename always (whoever reads the old name); a column drop when alterflow knows a consumer of
    the table (a view using the column is refused by the planner already, so: a DAG on its asset).
    The message names the readers: views using a renamed column (they stay pinned to the version
    they were created on, under the old name) and the DAGs scheduled on the table's asset."""
    if plan.kind == REJECTED or plan.table is None or not (plan.renamed_columns or plan.dropped_columns):
        return None
    dags = dag_readers.dags_reading(plan.table) if dag_readers is not None else ()
    asset = dag_readers.asset_uri(plan.table) if dag_readers is not None and dag_readers.unreachable is None else None
    changes = []
    if plan.renamed_columns:
        changes.append("renames column " + ", ".join(f"{old} to {new}" for old, new in plan.renamed_columns))
    if plan.dropped_columns and dags:
        changes.append("drops column " + ", ".join(plan.dropped_columns))
    if not changes:
        return None
    readers = []
    if plan.views_reading_renamed:
        readers.append(f"{_plural('view', plan.views_reading_renamed)} (pinned to the old name: re-create to read the new one)")
    if dags:
        readers.append(f"{_plural('DAG', dags)} (scheduled on or reading the asset {asset})")
    if readers:
        said = "readers alterflow knows: " + "; ".join(readers)
    else:
        said = "every reader of the old name breaks; alterflow knows none: no view uses it" + (
            f", no DAG is scheduled on {asset}" if asset is not None else ""
        )
    return f"{' and '.join(changes)} of {plan.table}: {said}", Readers(plan.views_reading_renamed, dags, asset)


def lint_migrations(
    catalog: Catalog,
    directory: pathlib.Path,
    rules: LintRules,
    warehouse: pathlib.Path | None = None,
    analyze: bool = False,
    spark: Callable[[], object] | None = None,
    status: MigrationStatus | None = None,
    dag_readers: AirflowDagReaders | None = None,
) -> LintReport:
    """`dag_readers`: the Airflow to ask for the DAGs reading a table (`AirflowDagReaders.from_settings`)."""
    status = status or migration_status(catalog, directory)
    plans = plan_pending(catalog, status.pending, warehouse, status.done_statements, status.pending_repeatables)
    linted = [LintedStatement(p, _plan_findings(p, rules, dag_readers)) for p in plans]
    if analyze:
        for item in linted:
            _analyze(catalog, warehouse, item, rules, spark)
    for item in linted:
        _suppress(item)
    report = LintReport(directory, linted, status.drift, rules)
    report.airflow_warning = dag_readers.unreachable if dag_readers is not None else None
    for d in status.blocking():
        report.drift_findings.append((d.script or "", Finding(d.kind, "error", f"{d.detail} (apply refuses until then)")))
    for d in status.warnings():
        report.drift_findings.append((d.script or "", Finding(d.kind, "warning", d.detail)))
    return report


def _plural(noun: str, names: tuple[str, ...]) -> str:
    return f"{noun}{'s' if len(names) > 1 else ''} {', '.join(names)}"


def _suppress(item: LintedStatement) -> None:
    """Move the findings the statement's `-- alterflow:nolint` directives cover to `suppressed`."""
    suppression = suppression_of(item.plan.file, item.plan.statement.position)
    kept = []
    for finding in item.findings:
        line = suppression.line_covering(finding.rule)
        if line is not None:
            item.suppressed.append(SuppressedFinding(finding, line))
        else:
            kept.append(finding)
    item.findings = kept


def _analyze(catalog: Catalog, warehouse: pathlib.Path | None, item: LintedStatement, rules: LintRules, spark) -> None:
    """EXPLAIN ANALYZE of a rewrite on today's data: the table's files read under today's version
    and converted, column by id, to the version this statement makes (through the pending
    statements before it)."""
    from alterflow.planner import Verdict
    from alterflow.rewrite.cast_analysis import analyze_local, analyze_spark
    from alterflow.rewrite.engines import choose_engine
    from alterflow.rewrite.validation_checks import CheckKind
    from alterflow.workflow.explain import estimate_seconds

    p = item.plan
    if p.kind != HEAVY or p.table_id is None or p.catalog_version is None or warehouse is None:
        return
    rows, nbytes = catalog.table_stats(p.table_id)
    engine = choose_engine(p.alter.properties.engine, rows, nbytes)
    snapshot = catalog.snapshot_by_id(p.table_id)
    on_cast_error = p.alter.properties.on_cast_error
    if engine == Engine.LOCAL or spark is None:
        engine = Engine.LOCAL
        analysis = analyze_local(warehouse, snapshot, p.catalog_version, p.alter.new, on_cast_error)
    else:
        analysis = analyze_spark(spark(), warehouse, snapshot, p.catalog_version, p.alter.new, on_cast_error)
    reverts = any(c.column_id is None and c.verdict is Verdict.HEAVY for c in p.alter.clauses)
    mine = {c.column_id for c in p.alter.clauses if c.verdict is Verdict.HEAVY and c.column_id is not None}
    failures = {cid: f for cid, f in analysis.failures.items() if reverts or cid in mine}
    item.failed_casts = sum(f.count for f in failures.values())
    item.samples = [{"column": p.alter.new.column_by_id(cid).name, **s.as_json()} for cid, f in failures.items() for s in f.samples][:5]
    item.est_seconds = estimate_seconds(catalog, analysis)
    item.engine = engine
    outcomes = [o for o in analysis.checks if _belongs_here(o, p.catalog_version, reverts, mine)]
    item.checks = []
    for outcome in outcomes:
        rule = outcome.check.rule
        if outcome.check.kind is CheckKind.FAILED_CASTS:  # this statement's own columns, as failed_casts and samples
            count, samples = item.failed_casts, item.samples
        else:
            count, samples = outcome.count, [s.as_json() for s in outcome.found.samples]
        item.checks.append({**outcome.as_json(), "count": count, "samples": samples})
        if count and rules.level(rule) != "off":
            item.findings.append(Finding(rule, rules.level(rule), _failing_message(outcome.check, count, samples)))


def _belongs_here(outcome, today, reverts: bool, mine: set[int]) -> bool:
    """Whether a check's result is this statement's to report: a NOT NULL column that is nullable
    today and that this statement does not touch was made NOT NULL by a pending statement before
    it, whose finding it is (that statement's apply fails first)."""
    from alterflow.rewrite.validation_checks import CheckKind

    if outcome.check.kind is not CheckKind.NOT_NULL or reverts:
        return True
    cid = outcome.check.column_ids[0]
    column = today.column_by_id(cid)
    return cid in mine or column is None or not column.nullable


def _failing_message(check, count: int, samples: list[dict]) -> str:
    from alterflow.rewrite.validation_checks import CheckKind

    shown = json.dumps(samples[:2])
    match check.kind:
        case CheckKind.FAILED_CASTS:
            return f"{count} value(s) of today's data would fail to convert, e.g. {shown}"
        case CheckKind.NOT_NULL:
            return f"{count} row(s) of today's data would be NULL in NOT NULL column {check.columns[0]} (validation fails), e.g. {shown}"
        case CheckKind.UNIQUE_KEY:
            return f"{count} row(s) of today's data would share a primary key ({', '.join(check.columns)}) once converted, e.g. {shown}"
    return f"{count} row(s) of today's data would fail validation's check: {check.description()}, e.g. {shown}"
