"""The approval's body (alterflow.airflow.migrate_tasks.approval_body) stays short whatever the
migration's size, so Approve and Reject sit just below it: statements to approve in full, the
others one line each, the rest and the drift counted."""

from __future__ import annotations

from alterflow.airflow.migrate_tasks import (
    MAX_DETAILED_LINES,
    MAX_DETAILED_STATEMENTS,
    MAX_LISTED_DRIFT,
    MAX_LISTED_STATEMENTS,
    approval_body,
)

REWRITE = {"level": "approve", "rule": "rewrite", "message": "rewrites the data of orders (3 rows today) into a new index"}


def statement(n: int, approve: bool, text: str | None = None) -> dict:
    heavy = {"kind": "HEAVY", "failed_casts": 2, "samples": [{"column": "amount", "value": "x", "key": {"id": 7}}], "est_seconds": 0.4}
    light = {"kind": "LIGHT", "failed_casts": None, "samples": []}
    return {
        "script": f"V{n}__step.sql",
        "line": 1,
        "statement": text or f"ALTER TABLE orders ADD COLUMN c{n} INT",
        "table": "orders",
        "rows": 3,
        "reason": "MODIFY COLUMN amount INT: STRING -> INT can fail and needs a rewrite",
        "findings": [REWRITE] if approve else [],
        **(heavy if approve else light),
    }


def body_of(statements: list[dict], drift: int = 0) -> str:
    report = {
        "statements": statements,
        "approvals": sum(1 for s in statements if s["findings"]),
        "errors": 0,
        "warnings": 0,
        "rules_from": "defaults",
        "drift": [{"kind": "outside", "detail": f"t{i} version 2 was made outside migrations"} for i in range(drift)],
    }
    return approval_body(report, {"directory": "/srv/migrations", "to": None, "files": {s["script"]: "x" for s in statements}})


def test_a_large_migration_shows_its_approvals_in_full_and_the_rest_in_a_line_each():
    approvals = [statement(n, approve=True) for n in range(1, 8)]  # 7 to approve: 5 in full
    long_text = "ALTER TABLE orders ADD COLUMN " + ", ADD COLUMN ".join(f"column_{i} INT" for i in range(30))
    others = [statement(n, approve=False, text=long_text if n == 8 else None) for n in range(8, 60)]
    body = body_of(approvals + others, drift=9)

    assert body.count("#### `V") == MAX_DETAILED_STATEMENTS and "#### `V1__step.sql` line 1: HEAVY (approve)" in body
    assert "**2 value(s) would fail to convert**: amount `'x'` (`id=7`)" in body
    assert (
        "- `V6__step.sql` line 1: HEAVY `ALTER TABLE orders ADD COLUMN c6 INT` (approve rewrite; **2 value(s) would fail to convert**)"
        in body
    )
    [cut] = [line for line in body.splitlines() if line.startswith("- `V8__step.sql`")]
    assert cut.endswith("…`") and len(cut) < 160 and "column_29" not in cut
    listed = [line for line in body.splitlines() if line.startswith("- `V")]
    assert len(listed) == MAX_LISTED_STATEMENTS
    assert f"- … and {2 + 52 - MAX_LISTED_STATEMENTS} more: every one is in the `lint` task's log and XCom `report`." in body
    assert body.count("- outside: ") == MAX_LISTED_DRIFT and "- … and 4 more, in the `lint` task's log." in body
    assert len(body.splitlines()) < 100  # what a person scrolls past to reach the buttons


def test_a_small_migration_shows_its_approval_first_then_the_rest():
    body = body_of([statement(1, approve=False), statement(2, approve=True)])
    assert body.index("#### `V2__step.sql` line 1: HEAVY (approve)") < body.index("#### The other statements")
    assert "- `V1__step.sql` line 1: LIGHT `ALTER TABLE orders ADD COLUMN c1 INT`" in body and "… and" not in body


def test_a_long_statement_to_approve_is_cut_in_the_body():
    create = "CREATE TABLE wide (\n" + ",\n".join(f"  c{i} INT" for i in range(100)) + "\n)"
    body = body_of([statement(1, approve=True, text=create)])
    fenced = body.split("```sql\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert len(fenced) == MAX_DETAILED_LINES and fenced[-1] == f"-- … {102 - MAX_DETAILED_LINES + 1} more line(s), in the lint's report"
    assert fenced[:2] == ["CREATE TABLE wide (", "  c0 INT,"]
