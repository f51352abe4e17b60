"""`alterflow migrate ...` in this process (`alterflow.cli.migrate_command.main`), on the catalog of
the `settings` fixture (SQLite or PostgreSQL): what it printed on stdout and stderr, and its exit
status. Faster than a subprocess per call, and the same code path after argument parsing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def error_line(self) -> str:
        """The one line a refusal prints on stderr (asserted to be one, with exit status 1)."""
        assert self.code == 1, self
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        return lines[0]


class MigrateCli:
    """Runs `alterflow migrate --dir DIRECTORY ...` with ALTERFLOW_HOME and ALTERFLOW_CATALOG_URL of
    `settings` set through `monkeypatch`; `capsys` gives what it printed."""

    def __init__(self, settings, directory, monkeypatch, capsys):
        self.directory = directory
        self.capsys = capsys
        monkeypatch.setenv("ALTERFLOW_HOME", str(settings.home))
        monkeypatch.setenv("ALTERFLOW_CATALOG_URL", settings.catalog_url)
        monkeypatch.setenv("ALTERFLOW_SPARK_MASTER", "local[2]")
        monkeypatch.delenv("ALTERFLOW_MIGRATIONS", raising=False)

    def __call__(self, *args: str) -> Outcome:
        from alterflow.cli.migrate_command import main

        self.capsys.readouterr()  # what earlier calls printed is theirs
        code = main(["--dir", str(self.directory), *args])
        printed = self.capsys.readouterr()
        return Outcome(code, printed.out, printed.err)
