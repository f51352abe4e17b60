"""`migrations/alterflow.sum`, the directory's integrity file: written by `migrate hash`, kept by
`migrate new` and `migrate diff`, checked by status, lint and apply (and its dry run), which refuse
a directory that does not match it in one line naming the files; two git branches that each add a
version conflict in it (both catalogs; git for real)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from tests.migrate.conftest import ORDERS
from tests.migrate.migrate_cli import MigrateCli, Outcome


@pytest.fixture
def cli(settings, migrations, monkeypatch, capsys) -> MigrateCli:
    return MigrateCli(settings, migrations.path, monkeypatch, capsys)


def _two_files(migrations) -> None:
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a');\n")
    migrations.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")


def _sum_lines(migrations) -> list[str]:
    return (migrations.path / "alterflow.sum").read_text(encoding="utf-8").splitlines()


def _states(cli) -> dict[str, str]:
    shown = cli("status", "--format", "json")
    assert shown.code == 0, shown
    return {m["script"]: m["state"] for m in json.loads(shown.out)["migrations"]}


def test_hash_writes_each_files_bytes_and_a_total_that_sha256sum_can_check(cli, migrations):
    _two_files(migrations)
    migrations.path.joinpath("V10__bom.sql").write_bytes(b"\xef\xbb\xbfALTER TABLE orders ADD COLUMN c INT;\r\n")
    migrations.write("README.md", "not a migration")
    wrote = cli("hash")
    assert wrote.code == 0 and wrote.out.strip() == f"wrote {migrations.path}/alterflow.sum: 3 file(s) (new)"
    lines = _sum_lines(migrations)
    # V10 after V2 (numbers as numbers); each line is `sha256sum`'s, of the raw bytes (BOM and CRLF included)
    assert [line.split("  ", 1)[1] for line in lines[1:]] == ["V1__orders.sql", "V2__region.sql", "V10__bom.sql"]
    for line in lines[1:]:
        digest, name = line.split("  ", 1)
        assert digest == hashlib.sha256((migrations.path / name).read_bytes()).hexdigest()
    assert lines[0] == hashlib.sha256("".join(f"{line}\n" for line in lines[1:]).encode()).hexdigest()
    if shutil.which("sha256sum"):
        checked = subprocess.run(
            ["sha256sum", "-c", "-"], input="\n".join(lines[1:]) + "\n", text=True, cwd=migrations.path, capture_output=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    again = cli("hash")
    assert again.out.strip() == f"wrote {migrations.path}/alterflow.sum: 3 file(s) (unchanged)"


def test_without_a_sum_file_nothing_is_checked_and_status_says_so(cli, migrations):
    _two_files(migrations)
    shown = cli("status")
    assert shown.code == 0, shown
    assert (
        shown.out.splitlines()[-1]
        == "note: no alterflow.sum: the directory is not checked for integrity; `alterflow migrate hash` writes it"
    )
    assert json.loads(cli("status", "--format", "json").out)["sum_file"] == "missing"
    # `new` in a directory that has migrations but no sum file does not start one (adoption: `hash` does)
    assert cli("new", "add", "channel").code == 0
    assert not (migrations.path / "alterflow.sum").exists()
    migrations.write("V3__add_channel.sql", "ALTER TABLE orders ADD COLUMN channel VARCHAR(8);\n")
    assert cli("hash").code == 0
    assert json.loads(cli("status", "--format", "json").out)["sum_file"] == "checked"
    assert "note:" not in cli("status").out


def _edit_v1(migrations):
    migrations.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n")


def _add_v3(migrations):
    migrations.write("V3__late.sql", "ALTER TABLE orders ADD COLUMN late INT;\n")


def _remove_v2(migrations):
    (migrations.path / "V2__region.sql").unlink()


def _all_three(migrations):
    _edit_v1(migrations)
    _add_v3(migrations)
    _remove_v2(migrations)


def _bom_only(migrations):
    """Only a byte-order mark put in front: the text reads the same, the bytes differ."""
    path = migrations.path / "V2__region.sql"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())


def _total_edited(migrations):
    path = migrations.path / "alterflow.sum"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["0" * 64, *lines[1:]]) + "\n")


def _line_garbled(migrations):
    path = migrations.path / "alterflow.sum"
    path.write_text(path.read_text() + "V9__x.sql h1:abc\n")


MISMATCHES = [
    (_edit_v1, "does not match the directory: edited V1__orders.sql; review the changes, then run `alterflow migrate hash`"),
    (_add_v3, "does not match the directory: added V3__late.sql; review the changes, then run `alterflow migrate hash`"),
    (_remove_v2, "does not match the directory: removed V2__region.sql; review the changes, then run `alterflow migrate hash`"),
    (_all_three, "does not match the directory: added V3__late.sql; removed V2__region.sql; edited V1__orders.sql; review the changes"),
    (_bom_only, "does not match the directory: edited V2__region.sql; review the changes"),
    (_total_edited, "line 1 does not match the lines below it (edited by hand, or a merge kept both sides?); review the changes"),
    (_line_garbled, "line 4 is not `<sha256>  <file name>`; run `alterflow migrate hash` after review"),
]


@pytest.mark.parametrize(("change", "expected"), MISMATCHES, ids=[m[0].__name__.strip("_") for m in MISMATCHES])
def test_status_lint_apply_and_the_dry_run_refuse_a_directory_that_does_not_match(cli, migrations, change, expected):
    _two_files(migrations)
    assert cli("apply", "--to", "1").code == 0
    assert cli("hash").code == 0
    change(migrations)
    line = f"error: {migrations.path}/alterflow.sum {expected}"
    for args in (("status",), ("lint",), ("lint", "--analyze"), ("apply",), ("apply", "--dry-run"), ("repair",), ("new", "more")):
        refused = cli(*args)
        assert refused.error_line.startswith(line), (args, refused.err)
        assert refused.out == ""
    assert sorted(p.name for p in migrations.path.iterdir() if p.name.startswith("V3__") or p.name.startswith("V4__")) == (
        ["V3__late.sql"] if change in (_add_v3, _all_three) else []
    )  # `new` wrote no file
    assert cli("hash").code == 0  # after review
    assert _states(cli)["V1__orders.sql"] == "APPLIED"  # status reads the directory again


def test_new_and_diff_keep_the_sum_file_and_refuse_a_directory_that_does_not_match(cli, migrations, tmp_path):
    created = cli("new", "create", "orders")  # no migration yet: the sum file starts with the first one
    assert created.code == 0 and created.out.strip() == f"created {migrations.path}/V1__create_orders.sql"
    assert [line.split("  ")[1] for line in _sum_lines(migrations)[1:]] == ["V1__create_orders.sql"]
    migrations.write("V1__create_orders.sql", ORDERS)
    refused = cli("lint")
    assert refused.error_line.endswith("edited V1__create_orders.sql; review the changes, then run `alterflow migrate hash`")
    assert cli("hash").out.strip().endswith("1 file(s) (edited V1__create_orders.sql)")
    assert cli("apply").code == 0
    desired = tmp_path / "desired.sql"
    desired.write_text(ORDERS.replace("note VARCHAR(20),", "note VARCHAR(20), region VARCHAR(8),"))
    diffed = cli("diff", "--to", str(desired))
    assert diffed.code == 0 and "wrote " in diffed.out, diffed
    assert [line.split("  ")[1] for line in _sum_lines(migrations)[1:]] == ["V1__create_orders.sql", "V2__diff_to_desired.sql"]
    assert json.loads(cli("status", "--format", "json").out)["sum_file"] == "checked"
    assert cli("apply").code == 0 and set(_states(cli).values()) == {"APPLIED"}
    # an unreviewed edit: diff and new refuse, and write nothing
    migrations.write("V2__diff_to_desired.sql", "ALTER TABLE orders ADD COLUMN other INT;\n")
    desired.write_text(ORDERS.replace("note VARCHAR(20),", "note VARCHAR(20), region VARCHAR(8), other INT, more INT,"))
    before = sorted(p.name for p in migrations.path.iterdir())
    for args in (("diff", "--to", str(desired)), ("new", "more")):
        assert cli(*args).error_line.endswith("edited V2__diff_to_desired.sql; review the changes, then run `alterflow migrate hash`")
    assert sorted(p.name for p in migrations.path.iterdir()) == before


UNREADABLE = [
    (b"", "line 1 is not the hash of the whole (64 hex digits); run `alterflow migrate hash` after review"),
    (b"\xff\xfe", "is not UTF-8 text; run `alterflow migrate hash` to write it again"),
    (
        ("a" * 64 + "\n" + "b" * 64 + "  V1__orders.sql\n" + "c" * 64 + "  V1__orders.sql\n").encode(),
        "line 3 lists 'V1__orders.sql' again; run `alterflow migrate hash` after review",
    ),
    (b"<<<<<<< HEAD\n", "line 1 is a git merge conflict marker: two branches added or changed migrations; give the files of one"),
]


@pytest.mark.parametrize(("text", "expected"), UNREADABLE, ids=["empty", "not-utf8", "listed-twice", "conflict"])
def test_a_sum_file_that_cannot_be_read_is_refused_in_one_line_and_hash_replaces_it(cli, migrations, text, expected):
    _two_files(migrations)
    path = migrations.path / "alterflow.sum"
    path.write_bytes(text)
    assert cli("lint").error_line.startswith(f"error: {path} {expected}")
    assert cli("hash").out.strip() == f"wrote {path}: 2 file(s) (it replaced an unreadable one)"
    assert cli("lint").code == 0


def test_a_sum_path_that_is_a_directory_and_hash_of_a_missing_directory(settings, migrations, monkeypatch, capsys, tmp_path):
    cli = MigrateCli(settings, migrations.path, monkeypatch, capsys)
    _two_files(migrations)
    path = migrations.path / "alterflow.sum"
    path.mkdir()
    assert cli("status").error_line == f"error: {path} is not a file; remove it, then run `alterflow migrate hash`"
    assert cli("hash").error_line == f"error: {path} is not a file; remove it, then run `alterflow migrate hash`"
    assert path.is_dir()
    nowhere = MigrateCli(settings, tmp_path / "nowhere", monkeypatch, capsys)
    assert nowhere("hash").error_line == f"error: migrations directory '{tmp_path}/nowhere' does not exist (--dir or ALTERFLOW_MIGRATIONS)"
    assert not (tmp_path / "nowhere").exists()


@pytest.fixture
def in_repo(tmp_path, monkeypatch, capsys):
    """`alterflow migrate ARGS` in this process with the repository `tmp_path/repo` as the working
    directory (the default `migrations/`), as a person types it there."""
    from alterflow.cli.migrate_command import main

    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ALTERFLOW_CATALOG_URL", raising=False)
    monkeypatch.delenv("ALTERFLOW_MIGRATIONS", raising=False)

    def run(*args: str) -> Outcome:
        capsys.readouterr()
        code = main(list(args))
        printed = capsys.readouterr()
        return Outcome(code, printed.out, printed.err)

    return run


def _git(repo, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    env.pop("GIT_DIR", None)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_two_branches_that_each_add_v7_conflict_in_git_on_the_sum_file(tmp_path, in_repo):
    """The docs' example: main holds V1..V6 and their sum; two branches each run `alterflow migrate
    new`, write their V7 and `migrate hash`; the second merge conflicts in alterflow.sum only."""
    repo = tmp_path / "repo"
    (repo / "migrations").mkdir()
    for version in range(1, 7):
        (repo / "migrations" / f"V{version}__step_{version}.sql").write_text(f"ALTER TABLE orders ADD COLUMN c{version} INT;\n")
    assert _git(repo, "init", "-q", "-b", "main").returncode == 0
    assert in_repo("hash").code == 0
    assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", "V1..V6").returncode == 0
    for branch, words in (("region", "add region"), ("channel", "add channel")):
        assert _git(repo, "checkout", "-q", "-b", branch, "main").returncode == 0
        created = in_repo("new", *words.split())
        assert created.out.strip() == f"created migrations/V7__{words.replace(' ', '_')}.sql", created
        (repo / "migrations" / f"V7__{words.replace(' ', '_')}.sql").write_text(f"ALTER TABLE orders ADD COLUMN {words.split()[1]} INT;\n")
        assert in_repo("hash").code == 0
        assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", f"V7: {words}").returncode == 0
    assert _git(repo, "checkout", "-q", "main").returncode == 0
    assert _git(repo, "merge", "-q", "region").returncode == 0  # the first one merges cleanly
    merged = _git(repo, "merge", "channel")
    assert merged.returncode == 1, merged
    conflicted = _git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert conflicted == ["migrations/alterflow.sum"]
    # the conflicted directory is refused, pointing at the fix
    refused = in_repo("status")
    assert refused.error_line.startswith("error: migrations/alterflow.sum line 1 is a git merge conflict marker: two branches"), refused
    # resolved: channel's file gets the next version, the sum is written again, the merge commits
    os.rename(repo / "migrations" / "V7__add_channel.sql", repo / "migrations" / "V8__add_channel.sql")
    assert in_repo("hash").code == 0
    assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", "merge channel as V8").returncode == 0
    listed = [line.split("  ")[1] for line in (repo / "migrations" / "alterflow.sum").read_text().splitlines()[1:]]
    assert listed[-2:] == ["V7__add_region.sql", "V8__add_channel.sql"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_without_the_sum_file_the_same_two_branches_merge_silently(tmp_path, in_repo):
    """What the sum file prevents: without it git merges both V7 files without a word."""
    repo = tmp_path / "repo"
    (repo / "migrations").mkdir()
    (repo / "migrations" / "V6__step.sql").write_text("ALTER TABLE orders ADD COLUMN c INT;\n")
    assert _git(repo, "init", "-q", "-b", "main").returncode == 0
    assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", "V6").returncode == 0
    for branch in ("region", "channel"):
        assert _git(repo, "checkout", "-q", "-b", branch, "main").returncode == 0
        assert in_repo("new", "add", branch).code == 0
        (repo / "migrations" / f"V7__add_{branch}.sql").write_text(f"ALTER TABLE orders ADD COLUMN {branch} INT;\n")
        assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", branch).returncode == 0
    assert _git(repo, "checkout", "-q", "main").returncode == 0
    assert _git(repo, "merge", "-q", "region").returncode == 0
    assert _git(repo, "merge", "-q", "--no-edit", "channel").returncode == 0
    assert not (repo / "migrations" / "alterflow.sum").exists()
    assert sorted(p.name for p in (repo / "migrations").iterdir()) == ["V6__step.sql", "V7__add_channel.sql", "V7__add_region.sql"]
