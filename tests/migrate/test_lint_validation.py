"""One check, two places (issue 36): `migrate lint --analyze` and EXPLAIN ANALYZE evaluate every
check the rewrite's validation will run, on today's data, so a clean analysis means the apply's
validation passes (docs/migrations.md, "What --analyze checks").

- the issue's scenario through the CLI on both catalogs: `MODIFY COLUMN v INT NOT NULL` over a
  column holding a NULL is an error of lint (count, key) and shows in EXPLAIN ANALYZE;
- each `on_cast_error` as validation treats it: a failed cast is an error with `fail` only; with
  `null` it is a NULL, an error in a NOT NULL column; with `quarantine` its row leaves;
- the invariant, over a corpus of heavyweight statements (the local-engine model corpus of
  tests/workflow/test_local_engine.py, with NOT NULL and every `on_cast_error` added): the analysis
  is clean exactly when the real ALTER's validation then passes, and its NULL counts are the ones
  validation reports.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from alterflow.cli import command, migrate_command
from alterflow.engine.session import Session, StatementError
from tests.migrate.conftest import ORDERS
from tests.support.heavy_jobs import sql


@pytest.fixture
def cli(tmp_path, catalog_url, monkeypatch, capsys):
    """`alterflow migrate ...` / `alterflow sql ...` in this process, on the parametrised catalog:
    (exit code, stdout, stderr)."""
    for name in [k for k in os.environ if k.startswith("ALTERFLOW_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)
    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", str(tmp_path / "migrations"))
    (tmp_path / "migrations").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.alterflow.lint]\n")  # the defaults, not this repository's

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = migrate_command.main(list(args[1:])) if args[0] == "migrate" else command.main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    run.migrations = tmp_path / "migrations"
    return run


def _lint(cli) -> tuple[int, dict]:
    code, out, err = cli("migrate", "lint", "--analyze", "--format", "json")
    assert err == "", err
    return code, json.loads(out)


def _explain(cli, statement: str) -> dict[str, dict]:
    code, out, err = cli("sql", "--format", "json", "-e", f"EXPLAIN ANALYZE {statement}")
    assert code == 0, err
    result = json.loads(out)
    return {row[0]: dict(zip(result["columns"], row)) for row in result["rows"]}


def test_a_null_in_a_column_made_not_null_is_a_lint_error_with_its_key_and_shows_in_explain_analyze(cli):
    cli.migrations.joinpath("V1__orders.sql").write_text(
        ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, NULL, 'b'), (3, 30, 'c'), (4, NULL, 'd');\n"
    )
    assert cli("migrate", "apply")[0] == 0
    statement = "ALTER TABLE orders MODIFY COLUMN amount INT NOT NULL"
    cli.migrations.joinpath("V2__amount_required.sql").write_text(statement + ";\n")

    code, report = _lint(cli)
    assert code == 1 and report["errors"] == 1
    [linted] = report["statements"]
    assert linted["failed_casts"] == 0  # no cast can fail here: the NULLs are the whole story
    [finding] = [f for f in linted["findings"] if f["level"] == "error"]
    assert finding["rule"] == "not_null"
    assert finding["message"].startswith("2 row(s) of today's data would be NULL in NOT NULL column amount (validation fails)")
    [not_null] = [c for c in linted["checks"] if c["count"]]
    assert (not_null["check"], not_null["columns"], not_null["count"]) == ("not_null", ["amount"], 2)
    assert sorted(not_null["samples"], key=lambda s: s["key"]["id"]) == [
        {"key": {"id": "2"}, "value": "NULL"},
        {"key": {"id": "4"}, "value": "NULL"},
    ]
    # every check validation runs is there, the ones no data can fail with their reason
    assert {c["check"] for c in linted["checks"]} == {
        "tablet_converted",
        "rows_accounted",
        "failed_casts",
        "not_null",
        "duplicate_keys",
    }
    assert all(c["holds_because"] for c in linted["checks"] if c["check"] in ("tablet_converted", "rows_accounted"))

    code, text, _err = cli("migrate", "lint", "--analyze")
    assert code == 1
    assert "error    not_null: 2 row(s) of today's data would be NULL in NOT NULL column amount" in text
    assert "analyze  NOT NULL column amount holds no NULL: 2 fail, e.g. [" in text

    plan = _explain(cli, statement)
    for row in (plan["MODIFY COLUMN amount INT NOT NULL"], plan["(statement)"]):
        [check] = json.loads(row["Validation"])
        assert (check["check"], check["count"]) == ("not_null", 2) and {s["key"]["id"] for s in check["samples"]} == {"2", "4"}

    # ... and the apply fails in validation exactly so; the rule can be turned off like any other
    code, _out, err = cli("migrate", "apply")
    assert code == 1 and re.search(r"validation failed: 2 of \d+ rows would hold NULL in NOT NULL column amount, e\.g\. \(id=2\)", err), err
    cli.migrations.parent.joinpath("pyproject.toml").write_text('[tool.alterflow.lint]\nnot_null = "warning"\n')
    code, report = _lint(cli)
    assert code == 0 and [f["level"] for f in report["statements"][0]["findings"] if f["rule"] == "not_null"] == ["warning"]


def test_a_clean_analysis_of_a_not_null_change_is_an_apply_that_passes(cli):
    cli.migrations.joinpath("V1__orders.sql").write_text(ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, NULL);\n")
    cli.migrations.joinpath("V2__amount_required.sql").write_text("ALTER TABLE orders MODIFY COLUMN amount BIGINT NOT NULL;\n")
    assert cli("migrate", "apply", "--to", "1")[0] == 0
    code, report = _lint(cli)
    assert code == 0 and report["errors"] == 0
    assert [c["count"] for c in report["statements"][0]["checks"]] == [0] * len(report["statements"][0]["checks"])
    assert cli("migrate", "apply")[0] == 0


def test_each_pending_statement_reports_the_failures_of_its_own_columns(cli):
    """The analysis of V3 converts today's rows through V2 as well; what V2 breaks is V2's finding."""
    cli.migrations.joinpath("V1__orders.sql").write_text(ORDERS + "INSERT INTO orders VALUES (1, 10, '5'), (2, NULL, 'b');\n")
    cli.migrations.joinpath("V2__note_number.sql").write_text("ALTER TABLE orders MODIFY COLUMN note INT NOT NULL;\n")
    cli.migrations.joinpath("V3__amount_required.sql").write_text("ALTER TABLE orders MODIFY COLUMN amount BIGINT NOT NULL;\n")
    assert cli("migrate", "apply", "--to", "1")[0] == 0
    code, report = _lint(cli)
    assert code == 1
    found = {
        s["script"]: sorted((c["check"], c.get("columns", []), c["count"]) for c in s["checks"] if c["count"]) for s in report["statements"]
    }
    assert found == {
        "V2__note_number.sql": [("failed_casts", [], 1), ("not_null", ["note"], 1)],
        "V3__amount_required.sql": [("not_null", ["amount"], 1)],
    }
    assert [s["failed_casts"] for s in report["statements"]] == [1, 0]


@pytest.mark.parametrize(
    ("on_cast_error", "errors"),
    [
        ("fail", {"failed_casts": 1, "not_null": 1}),  # the failed value is NULL too: validation names both
        ("null", {"not_null": 1}),  # the failed value becomes NULL in a NOT NULL column
        ("quarantine", {}),  # its row goes to quarantine: what stays converts
    ],
)
def test_on_cast_error_decides_what_a_failed_cast_in_a_not_null_column_fails(cli, on_cast_error, errors):
    cli.migrations.joinpath("V1__orders.sql").write_text(
        "CREATE TABLE orders (id BIGINT NOT NULL, note VARCHAR(20) NOT NULL, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;\n"
        "INSERT INTO orders VALUES (1, '5'), (2, 'b'), (3, '7');\n"
    )
    cli.migrations.joinpath("V2__note_number.sql").write_text(
        f'ALTER TABLE orders MODIFY COLUMN note INT NOT NULL PROPERTIES ("on_cast_error" = "{on_cast_error}");\n'
    )
    assert cli("migrate", "apply", "--to", "1")[0] == 0
    code, report = _lint(cli)
    [linted] = report["statements"]
    assert linted["failed_casts"] == 1  # counted whatever on_cast_error: it is shown
    found = {f["rule"]: f["message"] for f in linted["findings"] if f["level"] == "error"}
    assert {rule: int(message.split()[0]) for rule, message in found.items()} == errors
    assert all('"key": {"id": "2"}' in message for message in found.values())
    assert code == (1 if errors else 0)
    applied, _out, err = cli("migrate", "apply")
    assert applied == code, err  # the lint's verdict is the apply's
    if errors:
        assert "validation failed" in err


# ------------------------------------------------------------------------------------------------
# the invariant: a clean analysis <=> a passing validation, over a corpus of heavyweight statements
# ------------------------------------------------------------------------------------------------

TABLE = (
    "CREATE TABLE {name} (id BIGINT NOT NULL, grp INT, v STRING, d DECIMAL(9,3), day DATE, s STRING NOT NULL, n INT, "
    "PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3"
)
LOADS = (  # tests/workflow/test_local_engine.py's rows, with a NOT NULL text column s and a NULL-free n
    "INSERT INTO {name} VALUES (1, 1, '10', 1.500, '2024-01-02', '1', 1), (2, 2, 'twenty', NULL, NULL, 'two', 2), "
    "(3, 300, ' 30 ', 12345.678, '2024-03-04', '3', 3), (4, NULL, NULL, -0.001, '1999-12-31', '4', 4)",
    "INSERT INTO {name} VALUES (2, 20, '20', 2.000, '2024-02-02', '2', 2), (5, 40000, '9999999999', 5.125, '2030-01-01', 'x5', 5)",
    "INSERT INTO {name} VALUES (6, 6, '-6', 6.000, '2024-06-06', '6', 6), (7, 7, 'x7', 7.000, '2024-07-07', '7', 7), "
    "(1, 11, '11', 1.250, '2024-01-01', '1', 1)",
)
CORPUS = [  # (change, on_cast_error)
    ("MODIFY COLUMN v INT", "null"),
    ("MODIFY COLUMN v INT", "fail"),
    ("MODIFY COLUMN v INT", "quarantine"),
    ("MODIFY COLUMN v INT NOT NULL", "null"),
    ("MODIFY COLUMN v STRING NOT NULL", "fail"),
    ("MODIFY COLUMN grp SMALLINT", "null"),
    ("MODIFY COLUMN grp SMALLINT", "fail"),
    ("MODIFY COLUMN grp BIGINT NOT NULL", "fail"),
    ("MODIFY COLUMN d DECIMAL(6,1)", "null"),
    ("MODIFY COLUMN d STRING", "fail"),
    ("MODIFY COLUMN grp STRING", "fail"),
    ("MODIFY COLUMN s INT", "null"),
    ("MODIFY COLUMN s INT", "quarantine"),
    ("MODIFY COLUMN s INT", "fail"),
    ("MODIFY COLUMN n BIGINT NOT NULL", "fail"),
    ("MODIFY COLUMN day DATETIME NOT NULL", "fail"),
    ("ORDER BY (grp, id)", "fail"),
    ("DISTRIBUTED BY HASH(id) BUCKETS 5", "fail"),
    ("MODIFY COLUMN v BIGINT, DROP COLUMN day", "null"),
    ("MODIFY COLUMN v BIGINT NOT NULL, MODIFY COLUMN n BIGINT", "quarantine"),
]
NOT_NULL_COUNT = re.compile(r"(\d+) of \d+ rows would hold NULL in NOT NULL column (\w+)")


def _analysis_then_alter(session: Session, name: str, change: str, on_cast_error: str, engine: str) -> tuple[list, str, str]:
    """EXPLAIN ANALYZE of the change on a fresh table, then the change itself: (the checks the
    analysis found failing, the job's state, its Msg)."""
    sql(session, TABLE.format(name=name))
    for load in LOADS:
        sql(session, load.format(name=name))
    statement = f'ALTER TABLE {name} {change} PROPERTIES ("on_cast_error" = "{on_cast_error}", "engine" = "{engine}")'
    [result] = list(session.run(f"EXPLAIN ANALYZE {statement}"))
    whole = dict(zip(result.columns, result.rows[-1]))
    failing = json.loads(whole["Validation"])
    try:
        sql(session, statement)
    except StatementError:
        pass  # the job's state says how it ended
    job = session.catalog.jobs(session.catalog.table(name).id)[-1]
    return failing, job.state, job.msg


def _assert_invariant(session: Session, engine: str, corpus) -> None:
    outcomes = []
    for number, (change, on_cast_error) in enumerate(corpus):
        failing, state, msg = _analysis_then_alter(session, f"t{number}", change, on_cast_error, engine)
        outcomes.append((change, on_cast_error, bool(failing), state))
        where = f"{change} / {on_cast_error} on {engine}: analysis {failing}, job {state}: {msg}"
        # clean analysis -> validation passes; and, every data check being evaluated, the converse
        assert (state == "FINISHED") == (not failing), where
        if failing:
            assert msg.startswith("validation failed: "), where
            reported = {column: int(count) for count, column in NOT_NULL_COUNT.findall(msg)}
            assert reported == {c["columns"][0]: c["count"] for c in failing if c["check"] == "not_null"}, where
            assert (" do not convert" in msg) == any(c["check"] == "failed_casts" for c in failing), where
    # the corpus holds both answers, on every on_cast_error that fails something
    assert {o[2] for o in outcomes} == {True, False} and {o[1] for o in outcomes if o[2]} == {"fail", "null", "quarantine"} & {
        o[1] for o in corpus
    }


def test_a_clean_analysis_means_the_validation_passes_on_the_local_engine(catalog_session):
    """The whole corpus on SQLite; on PostgreSQL (the catalog changes nothing the analysis reads:
    a rewrite there costs the same seconds) every statement that changes NULLability, and each
    on_cast_error of the cast that can fail in a NOT NULL column."""
    on_sqlite = catalog_session.settings.catalog_url.startswith("sqlite")
    _assert_invariant(
        catalog_session, "local", CORPUS if on_sqlite else [c for c in CORPUS if "NOT NULL" in c[0] or c[0] == "MODIFY COLUMN s INT"]
    )


@pytest.mark.spark
def test_a_clean_analysis_means_the_validation_passes_on_spark(session, spark):
    _assert_invariant(session, "spark", [c for c in CORPUS if "NOT NULL" in c[0] or c[0] == "MODIFY COLUMN s INT"])


def test_explain_analyze_gives_each_clause_its_own_checks_and_the_statement_all(catalog_session):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, a STRING, b STRING, c INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, 'x', '1', 1), (2, '2', 'y', NULL), (3, 'z', 'w', 3)")
    [result] = list(s.run("EXPLAIN ANALYZE ALTER TABLE t MODIFY COLUMN a INT, MODIFY COLUMN b INT, MODIFY COLUMN c INT NOT NULL"))
    rows = {row[0]: dict(zip(result.columns, row)) for row in result.rows}

    def checks(clause: str) -> list[tuple]:
        return [(c["check"], c["count"], sorted(x["key"]["id"] for x in c["samples"])) for c in json.loads(rows[clause]["Validation"])]

    assert checks("MODIFY COLUMN a INT") == [("failed_casts", 2, ["1", "3"])]
    assert checks("MODIFY COLUMN b INT") == [("failed_casts", 2, ["2", "3"])]
    assert checks("MODIFY COLUMN c INT NOT NULL") == [("not_null", 1, ["2"])]
    assert checks("(statement)") == [("failed_casts", 4, ["1", "2", "3", "3"]), ("not_null", 1, ["2"])]
