"""Settings from the environment: a bad value is one line naming the variable, and changes nothing."""

from __future__ import annotations

import pytest

from alterflow.cli import command as cli
from alterflow.settings import SettingError, Settings


@pytest.mark.parametrize("name", ["sales", "prod.eu-1", "a_b", "x" * 63])
def test_a_catalog_name_is_taken_as_given(name):
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_CATALOG_NAME": name}).catalog_name == name


def test_the_catalog_name_defaults_to_default():
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h"}).catalog_name == "default"


@pytest.mark.parametrize("name", ["", "two words", "a/b", "-x", ".x", "x" * 64, "ü"])
def test_a_bad_catalog_name_is_one_line(name, monkeypatch, tmp_path, capsys):
    with pytest.raises(SettingError, match="ALTERFLOW_CATALOG_NAME must be"):
        Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_CATALOG_NAME": name})
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_NAME", name)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ALTERFLOW_CATALOG_NAME must be") and err.count("\n") == 1
    assert not (tmp_path / "home").exists()
