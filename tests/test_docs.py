"""The README stays short, and the documentation's links hold: every relative link in README.md and
docs/*.md names a file of the repository (and, with a #fragment into a Markdown file, one of its
headings), and nothing points outside the repository (for example at a file under ../shared)."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# [text](target) and ![alt](target); the target ends at the first space or ')'.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def links(path: pathlib.Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return LINK.findall(text)


def relative_links(path: pathlib.Path) -> list[str]:
    return [t for t in links(path) if not SCHEME.match(t)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m) for m in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


def test_docs_exist():
    names = {p.name for p in DOCS}
    assert "README.md" in names
    assert len(DOCS) > 1, "docs/ holds no Markdown file"


def test_readme_is_short():
    size = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert size < 8500, f"README.md has {size} characters; move details into docs/"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    broken = []
    for target in relative_links(path):
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path.resolve()
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_link_leaves_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{path.relative_to(ROOT)} mentions ../shared (not part of the repository)"
    outside = []
    for target in relative_links(path):
        file_part = target.partition("#")[0]
        if not file_part:
            continue
        if file_part.startswith("/"):
            outside.append(target)
            continue
        linked = (path.parent / file_part).resolve()
        if linked != ROOT and ROOT not in linked.parents:
            outside.append(target)
    assert not outside, f"{path.relative_to(ROOT)} links outside the repository: {outside}"


CONTRACT_CITATION = re.compile(r"\b" + "SP" + r"EC\b|\bthe sp" + r"ec\b|\u00a7\s*\d")


def test_nothing_cites_a_contract_outside_the_repository():
    """The project's docs are its contract: no tracked text file (code, tests, docs, Makefile,
    scripts, templates) cites the behaviour contract it was first built from (by name, or a
    section sign and number), a file a reader of the repository does not have."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    citing = []
    for name in filter(None, tracked):
        data = (ROOT / name).read_bytes() if (ROOT / name).is_file() else b""
        if b"\0" in data[:8192]:
            continue  # a binary file (an image, an archive)
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if CONTRACT_CITATION.search(line) and name != "tests/test_docs.py":
                citing.append(f"{name}:{n}")
    assert citing == [], citing
