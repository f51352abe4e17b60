"""The body of the `alterflow_migrate` approval (Airflow's Required Actions page renders it as
Markdown): paths, file names, statements and sample values are shown as written, in code spans and
fenced blocks with nothing escaped inside, with longer delimiters where the text holds backticks
(CommonMark). Rendered here with markdown-it-py, a CommonMark renderer, on both catalogs."""

from __future__ import annotations

import html

import pytest
from markdown_it import MarkdownIt

from alterflow.airflow import migrate_tasks
from alterflow.engine.session import Session
from alterflow.migrate.apply import MigrationApply
from alterflow.settings import Settings
from tests.support.dags import alterflow_env

ODD = "team_a*b `c` d__e"  # emphasis characters and backticks in the project's folder name
V1 = "CREATE TABLE orders (id INT NOT NULL, amount INT, note STRING, PRIMARY KEY (id));\nINSERT INTO orders VALUES (1, 10, '5'), (2, 20, 'x`_*y');\n"
V2 = "INSERT INTO orders VALUES (3, 30, 'a```b');\nALTER TABLE orders MODIFY COLUMN note INT;\n"


@pytest.fixture
def project(monkeypatch, tmp_path, catalog_url):
    alterflow_env(monkeypatch, tmp_path)
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)  # the tasks read the environment
    session = Session(Settings.from_env())
    directory = tmp_path / ODD / "migrations"
    directory.mkdir(parents=True)
    (directory.parent / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "approve"\n')
    (directory / "V1__orders.sql").write_text(V1)
    MigrationApply(session, directory, who="setup", on_line=lambda _line: None).run()
    (directory / "V2__odd_values.sql").write_text(V2)
    return directory


def _rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def _html(text: str) -> str:
    """Text as markdown-it-py writes it in HTML (&, <, > and " escaped)."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def test_paths_statements_and_values_show_as_written(project):
    directory = project
    _summary, report, body = migrate_tasks.lint({"migrations_dir": str(directory)})
    assert [(s["script"], s["kind"]) for s in report["statements"]] == [("V2__odd_values.sql", "DATA"), ("V2__odd_values.sql", "HEAVY")]
    page = _rendered(body)
    # The directory, the rules' pyproject.toml and each file name: code, exactly as on disk.
    assert f"<code>{_html(str(directory))}</code>" in page, body
    assert f"<code>{_html(str(directory.parent / 'pyproject.toml'))}</code>" in page, body
    assert "<h4><code>V2__odd_values.sql</code> line 2: HEAVY (approve, error)</h4>" in page, body
    # The statement to approve in a code block, the other on its line as a code span: a statement
    # holding ``` stays one span, as written.
    assert f'<pre><code class="language-sql">{_html(V2.splitlines()[1].rstrip(";"))}\n</code></pre>' in page, body
    assert f"<li><code>V2__odd_values.sql</code> line 1: DATA <code>{_html(V2.splitlines()[0].rstrip(';'))}</code></li>" in page, body
    # The failed cast's sample value, with its backtick and emphasis characters.
    assert f"<code>{_html(repr('x`_*y'))}</code>" in page, body
    # Nothing shown as code carries a Markdown escape.
    assert "\\_" not in "".join(part.split("</code>")[0] for part in page.split("<code")[1:])


@pytest.mark.parametrize(
    "text",
    ["plain", "a_b*c", "`tick", "tick`", "a ``double`` b", " spaced ", "```", "new\nline"],
)
def test_a_code_span_renders_to_the_text_as_written(text):
    """Each text, as a span inside a sentence, renders back to itself (a line break: a space)."""
    page = _rendered(f"before {migrate_tasks._code(text)} after")
    assert page == f"<p>before <code>{_html(text.replace(chr(10), ' '))}</code> after</p>\n"
