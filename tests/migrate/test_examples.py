"""examples/migrations, the history `make demo` applies: it lints clean and applies in order."""

from __future__ import annotations

import pathlib

from alterflow.migrate.apply import MigrationApply
from alterflow.migrate.lint import lint_migrations
from alterflow.migrate.rules import LintRules
from alterflow.migrate.status import migration_status

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples" / "migrations"


def test_the_example_history_lints_and_applies(session):
    report = lint_migrations(session.catalog, EXAMPLES, LintRules(), session.warehouse, analyze=True)
    assert (report.errors, report.warnings, report.approvals) == (0, 1, 1)  # the DATE rewrite asks for approval
    # the one warning: V3's rename breaks readers of the old name (none known yet: no view, no Airflow asked)
    warned = [(s.plan.script, f.rule) for s in report.statements for f in s.findings if f.level == "warning"]
    assert warned == [("V3__rename_note.sql", "backward_incompatible")]
    assert [s.plan.kind for s in report.statements].count("HEAVY") == 1
    result = MigrationApply(session, EXAMPLES, who="demo", on_line=lambda _line: None).run()
    assert len(result.applied) == len(list(EXAMPLES.glob("V*.sql"))) >= 4
    status = migration_status(session.catalog, EXAMPLES)
    assert {s.state for s in status.states} == {"APPLIED"} and status.drift == []
    rows = list(session.run("SELECT country, revenue, orders FROM revenue_by_country ORDER BY country"))[-1].rows
    assert rows == (("GB", 1630, 2), ("NL", 99, 1), ("US", 80, 1))
    orders = session.catalog.current_schema("orders")[1]
    assert [c.type.sql() for c in orders.columns if c.name == "ordered_on"] == ["DATE"]
