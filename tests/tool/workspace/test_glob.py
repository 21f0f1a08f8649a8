"""workspace_glob's matching (``globbing``): pathlib's rules, found by the tree's one scan."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from akgentic.tool.workspace import Filesystem
from akgentic.tool.workspace.globbing import GlobPattern, glob_paths


@pytest.fixture
def fs(tmp_path: Path) -> Filesystem:
    fs = Filesystem(tmp_path / "tree")
    for rel in (
        "README.md",
        ".hidden.md",
        "src/app.py",
        "src/pkg/mod.py",
        "docs/a.md",
        "docs/deep/b.md",
        "docs/deep/deeper/c.md",
    ):
        (fs.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (fs.root / rel).write_text("x")
    os.symlink("src", fs.root / "link")
    os.symlink("README.md", fs.root / "l.md")
    return fs


def matched(fs: Filesystem, pattern: str) -> list[str]:
    return sorted(rel for rel, _ in glob_paths(fs, GlobPattern.parse(pattern)))


@pytest.mark.parametrize(
    ("pattern", "paths"),
    [
        ("**/*.py", ["src/app.py", "src/pkg/mod.py"]),
        ("*.md", [".hidden.md", "README.md", "l.md"]),  # a leading dot is any character
        ("docs/**/*.md", ["docs/a.md", "docs/deep/b.md", "docs/deep/deeper/c.md"]),
        ("docs/**", ["docs/deep", "docs/deep/deeper"]),  # ending in '**': folders
        ("docs/**/**/c.md", ["docs/deep/deeper/c.md"]),
        ("src/*", ["src/app.py", "src/pkg"]),
        ("s?c/[ab]pp.py", ["src/app.py"]),
        ("./src//app.py", ["src/app.py"]),
        ("README.MD", []),  # case-sensitive
        ("link/*", ["src/app.py", "src/pkg"]),  # a link in its leading names: a path's rule
        ("*/*.py", ["src/app.py"]),  # a symlink the scan meets is never entered
        ("missing/*", []),
        ("README.md/*", []),
        ("*/", ["docs", "l.md", "link", "src"]),  # folders (and links: the tool resolves them)
        ("docs/*/", ["docs/deep"]),
        ("README.md/", []),
        ("src/", ["src"]),
    ],
)
def test_a_pattern_matches_as_pathlib_glob_does(
    fs: Filesystem, pattern: str, paths: list[str]
) -> None:
    assert matched(fs, pattern) == paths


def test_a_folder_no_path_under_which_can_match_is_never_listed(
    fs: Filesystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pattern bounds the scan: it starts at the pattern's leading names and enters a
    folder only while a path under it can still match."""
    listed: list[str] = []
    original = Filesystem.scan

    def spying(
        self: Filesystem, start: Path | None = None, enter: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, os.DirEntry[str]]]:
        for rel, entry in original(self, start, enter):
            listed.append(rel)
            yield rel, entry

    monkeypatch.setattr(Filesystem, "scan", spying)
    assert matched(fs, "*/deep/*.md") == ["docs/deep/b.md"]
    assert "src/pkg/mod.py" not in listed and "docs/deep/deeper/c.md" not in listed
    listed.clear()
    assert matched(fs, "docs/deep/*.md") == ["docs/deep/b.md"]
    assert all(rel.startswith("docs/deep/") for rel in listed)


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (".", "names the workspace root itself"),
        ("src/a**.py", "'**' can only be a whole name, not part of 'a**.py'"),
        ("**/a/" * 1000, "a pattern is a path: at most 4096 bytes"),
    ],
)
def test_a_pattern_that_names_no_path_is_refused_saying_why(pattern: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        GlobPattern.parse(pattern)
