"""``workspace_glob``'s matching: a pattern's paths, found by the tree's one scan.

A pattern is relative to the tree: names separated by ``/``, each matched as ``fnmatch``
matches a name (``*``, ``?``, ``[…]``; case-sensitive; a leading ``.`` is matched like any
other character), and ``**`` alone as a name for any number of folders, none included —
``**/*.py`` is every ``.py`` file of the tree, the root's too; a pattern ending in ``**``
names folders. That is what ``pathlib``'s glob does, which this replaces: it listed folders
by path, so a command swapping a folder for a symlink to the host while it listed could
make it list the host's names. The paths here come from :meth:`Filesystem.scan`, which
reaches every folder through descriptors and never through a symlink.

Two things bound the scan: the pattern's leading names with no wildcard are one folder,
where the scan starts (resolved by the path rule: a symlink inside the tree is followed
there, as a path the agent names is), and a folder is entered only while some path under
it can still match (a pattern with no ``**`` goes no deeper than its names). A symlink the
scan meets is a match when its name matches — the caller resolves it — and never entered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

from akgentic.tool.workspace.workspace import Filesystem

__all__ = ["MAX_PATTERN_BYTES", "GlobPattern", "glob_paths"]

_MAGIC = re.compile(r"[*?[]")
MAX_PATTERN_BYTES = 4096
"""The longest pattern, as the longest path the path rule takes: matching is linear in its
names per entry, so an unbounded one would hold the agent's thread."""


@dataclass(frozen=True, slots=True)
class GlobPattern:
    """A parsed pattern: the folder it starts at (its leading names with no wildcard), the
    names matched below it, and whether it names folders only (it ends in ``/`` or ``**``,
    as pathlib's: ``*/`` is the root's folders, not its files)."""

    folder: tuple[str, ...]
    names: tuple[str, ...]
    folders_only: bool = False

    @classmethod
    def parse(cls, pattern: str) -> GlobPattern:
        """``pattern``'s parts; ValueError saying what is wrong with it (longer than a path
        may be, ``**`` inside a name, or a pattern naming no path)."""
        if len(pattern.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES:
            raise ValueError(f"a pattern is a path: at most {MAX_PATTERN_BYTES} bytes")
        parts: list[str] = []
        for part in pattern.split("/"):
            if part in ("", ".") or (part == "**" and parts[-1:] == ["**"]):
                continue  # '**/**' is '**'
            parts.append(part)
        if not parts:
            raise ValueError("the pattern names the workspace root itself, not paths in it")
        for part in parts:
            if "**" in part and part != "**":
                raise ValueError(f"'**' can only be a whole name, not part of {part!r}")
        literal = 0
        while literal < len(parts) - 1 and not _MAGIC.search(parts[literal]):
            literal += 1
        folders_only = parts[-1] == "**" or pattern.endswith("/")
        return cls(tuple(parts[:literal]), tuple(parts[literal:]), folders_only)

    def start(self) -> frozenset[int]:
        """What the pattern's folder itself has matched: the numbers of :attr:`names` a path
        can have matched so far (``len(names)``: the path matches; none left: nothing under
        it can) — here none of the names, or the ``**``s first. A path's is one
        :meth:`step` per name from its folder's, linear in the names whatever the ``**``s."""
        return self._closure({0})

    def step(self, states: frozenset[int], part: str) -> frozenset[int]:
        """What a path reaching ``states`` has matched with one more name, ``part``."""
        moved: set[int] = set()
        for i in states:
            if i == len(self.names):
                continue
            name = self.names[i]
            if name == "**":
                moved.add(i)  # one more folder of the '**'
            elif fnmatchcase(part, name):
                moved.add(i + 1)
        return self._closure(moved)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` with each ``**`` also matching no folder at all."""
        out = set(states)
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < len(self.names) and self.names[i] == "**" and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return frozenset(out)

    def matched(self, states: frozenset[int]) -> bool:
        """Whether a path reaching ``states`` matches."""
        return len(self.names) in states

    def open(self, states: frozenset[int]) -> bool:
        """Whether a path below one reaching ``states`` can still match."""
        return any(i < len(self.names) for i in states)


def glob_paths(fs: Filesystem, pattern: GlobPattern) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """The entries of the tree ``fs`` that ``pattern`` matches, as the scan finds them
    (lazily: a caller that stops early scans no further), each as its path and its scan
    entry; a pattern ending in ``/`` or ``**`` matches folders (and symlinks, which the
    caller resolves, keeping those to a folder) only. Nothing when the pattern's folder is
    missing, a file, or outside.

    Each entry's match is one :meth:`GlobPattern.step` from its folder's, kept for the
    folders the scan enters."""
    try:
        start = fs.resolve("/".join(pattern.folder))
    except (OSError, ValueError):
        return
    if not start.is_dir():
        return
    top = fs.relative(start)
    skip = 0 if top == "." else len(top) + 1
    folders: dict[str, frozenset[int]] = {"": pattern.start()}

    def reached(rel: str) -> frozenset[int]:
        folder, _, name = rel[skip:].rpartition("/")
        return pattern.step(folders[folder], name)  # its folder was entered: known

    def enter(rel: str) -> bool:
        states = reached(rel)
        if not pattern.open(states):
            return False
        folders[rel[skip:]] = states
        return True

    for rel, entry in fs.scan(start, enter):
        if pattern.folders_only and not (entry.is_dir(follow_symlinks=False) or entry.is_symlink()):
            continue
        states = folders.get(rel[skip:])
        if pattern.matched(states if states is not None else reached(rel)):
            yield rel, entry
