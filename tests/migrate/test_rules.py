"""The lint rules of pyproject.toml's [tool.alterflow.lint]."""

from __future__ import annotations

import pytest

from alterflow.migrate.rules import DEFAULTS, LintConfigError, load_rules, parse_rules


def test_defaults_without_a_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    rules = load_rules(pyproject=tmp_path / "pyproject.toml")
    assert rules.levels == DEFAULTS and rules.level("rewrite") == "approve"


def test_found_from_the_migrations_directory_upwards(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.alterflow.lint]\ndrop_column = "error"\nrewrite_rows_over = { rows = 5, level = "error" }\n'
    )
    (tmp_path / "db" / "migrations").mkdir(parents=True)
    rules = load_rules(tmp_path / "db" / "migrations")
    assert rules.level("drop_column") == "error" and rules.rows_over == 5 and rules.level("rewrite_rows_over") == "error"
    assert rules.source == str(tmp_path / "pyproject.toml")


def test_a_plain_number_sets_the_rows(tmp_path):
    assert parse_rules({"rewrite_rows_over": 100}).rows_over == 100


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"rewrites": "error"}, "unknown rule 'rewrites'"),
        ({"rewrite": "fatal"}, "unknown level 'fatal'"),
        ({"rejected": "warning"}, "always an error"),
        ({"rewrite_rows_over": -1}, "whole number of rows"),
        ({"rewrite_rows_over": {"rows": 3, "lvl": "error"}}, "takes rows and level"),
    ],
)
def test_bad_rules_are_one_line(section, expected):
    with pytest.raises(LintConfigError) as info:
        parse_rules(section)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_invalid_toml_is_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.alterflow.lint\n")
    with pytest.raises(LintConfigError, match="is not valid TOML"):
        load_rules(pyproject=tmp_path / "pyproject.toml")
