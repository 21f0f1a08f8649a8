"""What crosses the card/actor boundary, the refusal texts, and every cap.

A mutation is a pydantic model (:class:`WriteFile`, :class:`EditFile`,
:class:`PatchFiles`, :class:`DeleteFile`, :class:`MakeDir`) asked of ``#Workspace-…``;
the answer is a :class:`MutationOutcome`. What the gate keeps on the tree is an
:class:`Observation` per (agent, path) — the hash of what that agent last read or wrote —
and a :class:`LastWrite` per path, so a refusal can say who changed the file.

The refusal texts live here, once, because they are the contract the model learns from:
what happened, that nothing was written, what would have been destroyed, and what to do.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import time
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from akgentic.core import BaseConfig, clip, excerpt
from akgentic.core.serialization import SerializableModel
from akgentic.tool.errors import RetriableError
from akgentic.tool.vector_store import VectorStoreParam
from akgentic.tool.workspace.workspace import (
    Filesystem,
    FileTooLargeError,
    InvalidPathError,
    NotRegularFileError,
    PathEscapeError,
    WorkspacePath,
)

__all__ = [
    "MAX_CHANGE_BYTES",
    "MAX_DIFF_CHARS",
    "MAX_GLOB_RESULTS",
    "MAX_GREP_RESULTS",
    "MAX_LIST_ENTRIES",
    "MAX_OBSERVATIONS",
    "MAX_READ_LINES",
    "CalledAs",
    "DeleteFile",
    "EditFile",
    "EditItem",
    "FileChange",
    "LastWrite",
    "MakeDir",
    "Mutation",
    "MutationOutcome",
    "Observation",
    "PatchFiles",
    "WorkspaceConfig",
    "WriteFile",
    "content_sha",
    "diff_text",
    "path_error",
    "read_regular",
    "refusal_changed",
    "refusal_deleted",
    "refusal_unread",
]

MAX_READ_LINES = 2000
"""Lines ``workspace_read`` shows by default; the answer says how to read on."""
MAX_LINE_CHARS = 2000
"""A longer line is cut, with a note."""
MAX_LIST_ENTRIES = 500
MAX_GLOB_RESULTS = 500
MAX_GREP_RESULTS = 200
MAX_DIFF_CHARS = 6000
"""The most of a diff a refusal carries; the rest is summarised."""
MAX_OBSERVATIONS = 5000
"""Paths remembered per agent; the least recently seen are forgotten first (and a
forgotten file simply needs reading again before it can be overwritten)."""
MAX_SEARCH_FILES = 5000
"""Files a search or an index pass looks at, at most."""
MAX_CHANGE_BYTES = 20 * 1024 * 1024
"""The largest file a mutation reads (what a read takes too): a larger one is refused on
its size for a write, edit or patch, and deleted unread."""
MAX_INDEX_BYTES = 2 * 1024 * 1024
"""A text file larger than this is not indexed for search."""


def content_sha(data: bytes) -> str:
    """The identity of a file's content: SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


class Observation(SerializableModel):
    """What one agent last saw of one path: read it, or wrote it (an accepted mutation)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    sha: str
    at: float = Field(default_factory=time.time)


class LastWrite(SerializableModel):
    """Who last changed a path through the gate, and when."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    agent: str
    team: str = ""
    op: str
    sha: str | None
    at: float = Field(default_factory=time.time)


class WriteFile(SerializableModel):
    """Create or replace ``path`` with ``content`` (refused over an unread existing file)."""

    op: Literal["write"] = "write"
    path: str
    content: str


class EditItem(SerializableModel):
    """One replacement inside an :class:`EditFile`."""

    old_string: str
    new_string: str
    replace_all: bool = False


class EditFile(SerializableModel):
    """Replace text in ``path``: one edit (``workspace_edit``) or several, all or nothing."""

    op: Literal["edit", "multi_edit"] = "edit"
    path: str
    edits: list[EditItem]


class PatchFiles(SerializableModel):
    """Apply a unified diff (one or more files), all or nothing."""

    op: Literal["patch"] = "patch"
    patch: str


class DeleteFile(SerializableModel):
    """Delete a file, or a directory (``recursive`` when it is not empty)."""

    op: Literal["delete"] = "delete"
    path: str
    recursive: bool = False


class MakeDir(SerializableModel):
    """Create a directory (and its parents)."""

    op: Literal["mkdir"] = "mkdir"
    path: str


Mutation = WriteFile | EditFile | PatchFiles | DeleteFile | MakeDir


class FileChange(SerializableModel):
    """One file an accepted mutation changed."""

    path: str
    action: Literal["created", "modified", "deleted", "directory"]
    added: int = 0
    removed: int = 0


class MutationOutcome(SerializableModel):
    """What an accepted mutation did; ``summary`` is the tool's answer to the model."""

    op: str
    changes: list[FileChange] = Field(default_factory=list)
    commit: str | None = None
    summary: str = ""
    unrecorded: str | None = None
    """Why the journal could not record this mutation (it landed all the same), or None."""
    left_out: list[str] = Field(default_factory=list)
    """The files the journal left out of this mutation's commit for their size (over
    ``MAX_CHANGE_BYTES``; written all the same)."""


class WorkspaceConfig(BaseConfig):
    """The ``#Workspace-<scope>/<kind>/<leaf>`` actor's configuration.

    ``workspace`` — the tree it dispatches for; ``vector_store`` — where the tree's
    document chunks are embedded (the shared ``workspace_chunks`` collection); ``search``
    — whether documents are indexed at all (the first card to bind the actor decides).
    """

    role: str = "Workspace"
    workspace: WorkspacePath
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)
    search: bool = True


# -- the refusals ---------------------------------------------------------------------------


def line_counts(before: str | None, after: str | None) -> tuple[int, int]:
    """(lines added, lines removed) from ``before`` to ``after``."""
    old = (before or "").splitlines()
    new = (after or "").splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_text(
    path: str, before: str | None, after: str | None, before_label: str, after_label: str
) -> str:
    """A unified diff from ``before`` to ``after``, cut at :data:`MAX_DIFF_CHARS`."""
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=f"{path} ({before_label})",
            tofile=f"{path} ({after_label})",
        )
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(text) > MAX_DIFF_CHARS:
        cut = text[:MAX_DIFF_CHARS]
        text = (
            cut[: cut.rfind("\n") + 1]
            + f"[… {len(text) - MAX_DIFF_CHARS} more characters of diff]\n"
        )
    return text or "(no textual difference)\n"


class CalledAs(SerializableModel):
    """The names the model calls the card's tools by, for the texts worded away from the
    card — the write gate's refusals, the error table, the edit and reader errors: inside a
    ToolsetCard ``workspace_read`` is ``<set>_workspace_read``. The card fills it from its
    ``called_as`` (the one rule); a tool it does not name keeps its own name, as in a card
    in no set (the default) or in the set ``workspace``."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    names: dict[str, str] = Field(default_factory=dict)

    def __call__(self, tool: str) -> str:
        return self.names.get(tool, tool)


BARE = CalledAs()
"""The tools' own names: a card in no set."""


def _who(last: LastWrite | None) -> str:
    if last is None:
        return "outside the workspace tools (by hand, or by a command)"
    ago = max(0, int(time.time() - last.at))
    return f"by {last.agent} ({last.op}, {ago}s ago)"


def refusal_changed(
    path: str,
    current: str | None,
    proposed: str | None,
    last: LastWrite | None,
    *,
    known: bool = True,
    called: CalledAs = BARE,
) -> str:
    """The file changed since this agent last read it: nothing written, the diff of what
    the mutation would destroy (or, when the change no longer applies at all, what the file
    holds now), and the instruction to re-read."""
    if known:
        diff = diff_text(path, current, proposed, "now", "your change")
        what = (
            f"Your change was made against an older version; applying it would destroy what "
            f"this diff removes:\n{diff}"
        )
    else:
        now = diff_text(path, "", current, "empty", "now")
        what = f"Your change does not even apply to what it holds now, which is:\n{now}"
    return (
        f"Refused: {path} has changed since you last read it — changed {_who(last)}. Nothing "
        f"was written. {what}"
        f"Read {path} again with {called('workspace_read')}, then redo your change on what "
        f"it holds now."
    )


def refusal_deleted(path: str, last: LastWrite | None, called: CalledAs = BARE) -> str:
    """The file this agent read has been deleted since."""
    return (
        f"Refused: {path} was deleted since you last read it — deleted {_who(last)}. Nothing "
        f"was written. Check with {called('workspace_list')} whether it should still exist "
        f"before "
        f"writing it again (a new file needs no prior read)."
    )


def refusal_unread(
    path: str, current: str | None, proposed: str | None, called: CalledAs = BARE
) -> str:
    """A whole-file write over an existing file this agent never read."""
    diff = diff_text(path, current, proposed, "now", "your write")
    return (
        f"Refused: {path} already exists and you have not read it. Nothing was written. "
        f"Writing it whole would destroy what this diff removes:\n{diff}"
        f"Read {path} with {called('workspace_read')} first (or change part of it with "
        f"{called('workspace_edit')}), then retry."
    )


def path_error(exc: Exception, path: str, called: CalledAs = BARE) -> RetriableError:
    """The error table, worded for the model: what was wrong with ``path`` and what to do
    (naming the tools as ``called`` says the model calls them).

    A path escape and an operating-system refusal are different messages on purpose — told
    the first when the second happened, an agent rewrites a correct path for ever.
    """
    if isinstance(exc, RetriableError):
        return exc
    path = clip(path)  # what the model sent may be huge: quote an excerpt, never all of it
    if isinstance(exc, PathEscapeError):
        return RetriableError(
            f"Path escapes workspace root — use a relative path inside the workspace "
            f"(got {path!r}; no absolute paths, no '..' above the root, no symlinks out)"
        )
    if isinstance(exc, InvalidPathError):
        return RetriableError(
            f"Invalid path {path!r}: {exc}. Use a relative path of ordinary names."
        )
    if isinstance(exc, FileNotFoundError):
        return RetriableError(f"File not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return RetriableError(
            f"{path} is a directory; name a file ({called('workspace_list')} shows what is in it)"
        )
    if isinstance(exc, NotADirectoryError):
        return RetriableError(f"{path}: a part of this path is a file, not a directory")
    if isinstance(exc, PermissionError):
        return RetriableError(
            f"The path {path} is fine, but the file is not replaceable: the operating system "
            f"denied the change ({exc.strerror or exc}). Do not retry with another path; "
            f"report that this file is read-only."
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return RetriableError(f"Invalid path {path!r}: a name in it is too long.")
    if isinstance(exc, OSError):
        return RetriableError(
            f"The workspace could not complete this on {path}: {exc.strerror or exc}. Try "
            f"again; report it if it persists."
        )
    return RetriableError(f"{path}: {exc}")


def read_regular(
    fs: Filesystem,
    real: Path,
    path: str,
    max_bytes: int | None = None,
    called: CalledAs = BARE,
) -> bytes:
    """The bytes of the regular file at ``real`` (resolved from ``path``, as the model named
    it) in the tree ``fs``; a ``RetriableError`` worded by :func:`path_error` otherwise —
    for a file over ``max_bytes`` too, refused on its size before any of it is read.

    The one check that a path names a file, made by :meth:`Filesystem.read_bytes`: reached
    without following a symlink (a folder swapped for one since the path rule looked is an
    escape), opened without blocking and checked on the open descriptor, because a FIFO (a
    command in the sandbox can make one) would block a plain read, and the agent, for ever
    — and replacing one would silently swap a thing that is not a file for a file. Reads
    and mutations both go through it.
    """
    try:
        return fs.read_bytes(real, max_bytes)
    except FileTooLargeError as exc:
        raise RetriableError(
            f"{exc.filename} is {exc.size:,} bytes, more than the {exc.limit:,} a read takes: "
            f"nothing was read. Look at a part of it with a command (head, tail, grep) if you "
            f"can run commands."
        ) from None
    except NotRegularFileError:
        raise RetriableError(
            f"{excerpt(path)} is not a regular file (a pipe, socket or device): only "
            f"regular files can be read or changed"
        ) from None
    except OSError as exc:
        raise path_error(exc, path, called) from None
