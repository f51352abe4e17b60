"""The `alterflow_migrate` DAG's tasks refuse a migrations directory that does not match its
alterflow.sum, as the CLI does: the `lint` task fails with the one line naming the files, and the
`apply` task does when the directory changed after the lint (both catalogs)."""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowFailException

from alterflow.airflow import migrate_tasks
from alterflow.migrate.sum_file import write_sum
from tests.support.dags import alterflow_env

V1 = "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id));\n"
V2 = "ALTER TABLE orders ADD COLUMN note STRING;\n"


@pytest.fixture
def directory(monkeypatch, tmp_path, catalog_url):
    alterflow_env(monkeypatch, tmp_path)
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "V1__orders.sql").write_text(V1)
    write_sum(directory)
    return directory


def test_the_lint_and_apply_tasks_refuse_a_directory_that_does_not_match_its_sum_file(directory):
    (directory / "V2__note.sql").write_text(V2)
    with pytest.raises(AirflowFailException) as refused:
        migrate_tasks.lint({"migrations_dir": str(directory)})
    assert str(refused.value) == (
        f"{directory}/alterflow.sum does not match the directory: added V2__note.sql; review the changes, then run `alterflow migrate hash`"
    )
    write_sum(directory)  # reviewed
    summary, _report, _body = migrate_tasks.lint({"migrations_dir": str(directory)})
    assert summary["files"].keys() == {"V1__orders.sql", "V2__note.sql"}
    (directory / "V2__note.sql").write_text(V2 + "ALTER TABLE orders ADD COLUMN late INT;\n")  # after the approval
    with pytest.raises(AirflowFailException) as refused:
        migrate_tasks.apply(summary, "alice")
    assert str(refused.value).endswith(
        "alterflow.sum does not match the directory: edited V2__note.sql; review the changes, then run `alterflow migrate hash`"
    )
