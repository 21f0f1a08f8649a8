"""The write gate: a mutation lands only over what its agent last saw — checked and written
together, under a lock held on the tree.

The rule, exactly:

- A mutation of a file the agent has read is refused unless the file is still what that
  agent last read (or last wrote: an accepted mutation is also what its author saw).
- A whole-file ``write`` over an existing file the agent never read is refused too.
  Edits and patches are anchored on the text they replace, and a delete replaces nothing,
  so they need no prior read — but a file the agent *has* read must not have changed.
- The check and the write happen together under an ``fcntl.flock`` on a lock file keyed by
  the path, under the tree's metadata sibling. The lock lives on the tree, not in an
  actor, so two teams and two processes over one tree are ordered by the same thing.
- A refusal raises :class:`GateRefusalError` (a ``RetriableError``): nothing was written; the
  message carries the diff of what the mutation would have destroyed and the instruction
  to read again. There is no bypass argument anywhere.

What the gate remembers lives on the tree too (``<leaf>.index``): one YAML file per agent
with the hash of what it last saw of each path (:class:`Observation`), and one
:class:`LastWrite` per path, so a refusal can say who changed the file. Nothing is held in
memory between calls, which is why any number of actors and processes may share a tree.

With a journal, the tree's journal lock is taken before the path locks (one order
everywhere, so no deadlock), out-of-band changes are committed as nobody first, and the
accepted mutation — its own paths, nothing else — is committed as its agent before the
locks are released: one linear, truthfully attributed history. While a command runs in
the tree (its exec lease is held), what changed out of band is left for the run's own
commit: it is most likely the run's work, and it is not nobody's.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

from akgentic.core import clip, excerpt
from akgentic.core.excerpt import exception_words
from akgentic.core.serialization import SerializationError, check_shape
from akgentic.core.words import counted
from akgentic.tool.errors import RetriableError
from akgentic.tool.workspace.edit import (
    EditError,
    EditSpec,
    FilePatch,
    PatchError,
    apply_edits,
    parse_patch,
    render_file_patch,
)
from akgentic.tool.workspace.journal import GitJournal, Identity
from akgentic.tool.workspace.models import (
    BARE,
    MAX_CHANGE_BYTES,
    MAX_OBSERVATIONS,
    CalledAs,
    DeleteFile,
    EditFile,
    FileChange,
    LastWrite,
    MakeDir,
    Mutation,
    MutationOutcome,
    Observation,
    PatchFiles,
    WriteFile,
    content_sha,
    line_counts,
    read_regular,
    refusal_changed,
    refusal_deleted,
    refusal_unread,
)
from akgentic.tool.workspace.workspace import (
    Filesystem,
    FileTooLargeError,
    WorkspacePath,
    WriteEntry,
)

__all__ = [
    "GateRefusalError",
    "TreeRecords",
    "WriteGate",
    "read_yaml",
    "write_in_place",
    "write_yaml",
]

logger = logging.getLogger("akgentic.tool.workspace")

try:
    _Loader: Any = yaml.CSafeLoader
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader, _Dumper = yaml.SafeLoader, yaml.SafeDumper


class GateRefusalError(RetriableError):
    """The gate refused a mutation; the message is what the model reads (nothing was written)."""


def read_yaml(path: Path) -> Any:
    """The YAML document at ``path``, or None when it is missing, unreadable, or refused
    for its shape (aliases that expand to millions of values, data that holds itself:
    the workspace is written by the commands the model runs, too)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=_Loader)
        check_shape(data)
    except (OSError, RecursionError, yaml.YAMLError, SerializationError):
        return None
    return data


def write_yaml(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` atomically (readers see the old or the new record)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}-{id(data):x}.tmp")
    with open(temp, "w", encoding="utf-8") as handle:
        yaml.dump(data, handle, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    os.replace(temp, path)


def write_in_place(path: Path, data: bytes) -> None:
    """Overwrite the small record at ``path`` without a rename or a truncate-to-zero.

    For the gate's own records on the hot path (what an agent saw, who wrote last): both
    are read and written under the locks that order their writers, so a rename buys no
    atomicity here, while on ext4 a rename over a file (or a truncate to zero) forces a
    data flush that would cost more than the write itself. A record torn by a crash reads
    as missing — which only ever makes the gate refuse more (read again), never less.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        offset = 0
        while offset < len(data):
            offset += os.pwrite(fd, view[offset:], offset)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _dump(data: Any) -> bytes:
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    return text.encode("utf-8")


def _utf8(text: str, rel: str) -> bytes:
    """``text`` as the file's bytes; a lone surrogate (which no UTF-8 file can hold) is a
    RetriableError saying where it is."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RetriableError(
            f"The new text of {rel} holds {excerpt(text[exc.start])} at character {exc.start}, "
            f"half of a pair of UTF-16 surrogates that no UTF-8 file can hold: send the text "
            f"without it. Nothing was written."
        ) from None


def _key(rel: str) -> str:
    return hashlib.sha1(rel.encode("utf-8")).hexdigest()[:24]


EXEC_LEASE = "exec"
"""The name of the tree's exec lease among its locks (``locks/exec.lock``): held by the
run that has the tree, in whichever process runs it."""


def lock_file(index_dir: Path, name: str) -> Path:
    """Where the tree's lock ``name`` lives: ``<leaf>.index/locks/<name>.lock``."""
    return index_dir / "locks" / f"{name}.lock"


class TreeRecords:
    """The tree's metadata sibling: locks, observations, last writes."""

    def __init__(self, workspace: WorkspacePath) -> None:
        self.dir = workspace.index_dir
        self.dir.mkdir(parents=True, exist_ok=True)

    # -- locks ------------------------------------------------------------------------------
    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An exclusive ``flock`` on ``locks/<name>.lock``, held for the ``with`` block."""
        path = lock_file(self.dir, name)
        path.parent.mkdir(exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def exec_running(self) -> bool:
        """Whether a command holds the tree's exec lease now, in this process or another.

        Ask only under the journal lock: the probe holds the lease's ``flock`` for a moment,
        and an exec that tried to take it then would be told the tree is busy — which is
        why the lease is only ever taken under the journal lock too.
        """
        try:
            fd = os.open(lock_file(self.dir, EXEC_LEASE), os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops the probe's hold, never the holder's
        return False

    def path_lock_name(self, rel: str) -> str:
        return f"path-{_key(rel)}"

    # -- observations -------------------------------------------------------------------------
    def _views_file(self, identity: Identity) -> Path:
        return self.dir / "views" / f"{identity.key}.yaml"

    def load_views(self, identity: Identity) -> dict[str, Observation]:
        data = read_yaml(self._views_file(identity))
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict):
            return {}
        views: dict[str, Observation] = {}
        for rel, raw in files.items():
            if isinstance(raw, dict) and isinstance(raw.get("sha"), str):
                views[str(rel)] = Observation(sha=raw["sha"], at=float(raw.get("at", 0.0)))
        return views

    def save_views(self, identity: Identity, views: dict[str, Observation]) -> None:
        if len(views) > MAX_OBSERVATIONS:
            keep = sorted(views.items(), key=lambda kv: kv[1].at)[-MAX_OBSERVATIONS:]
            views = dict(keep)
        record = {
            "agent": identity.name,
            "team": identity.team,
            "files": {rel: {"sha": o.sha, "at": round(o.at, 3)} for rel, o in views.items()},
        }
        write_in_place(self._views_file(identity), _dump(record))

    # -- last writes ---------------------------------------------------------------------------
    def _last_file(self, rel: str) -> Path:
        return self.dir / "writes" / f"{_key(rel)}.yaml"

    def last_write(self, rel: str) -> LastWrite | None:
        data = read_yaml(self._last_file(rel))
        if not isinstance(data, dict):
            return None
        try:
            return LastWrite.model_validate({k: v for k, v in data.items() if k != "path"})
        except ValueError:
            return None

    def set_last_write(self, rel: str, last: LastWrite) -> None:
        write_in_place(self._last_file(rel), _dump({"path": rel, **last.model_dump(mode="json")}))


class WriteGate:
    """Reads that are remembered, and mutations that are checked; see the module docstring."""

    def __init__(self, workspace: WorkspacePath, fs: Filesystem | None = None) -> None:
        self.workspace = workspace
        self.fs = fs if fs is not None else Filesystem(workspace.tree)
        self.records = TreeRecords(workspace)

    # -- reads ---------------------------------------------------------------------------------
    def observe(self, identity: Identity, rel: str, sha: str) -> None:
        """Remember that ``identity`` has seen ``rel`` with content hash ``sha``."""
        views = self.records.load_views(identity)
        views[rel] = Observation(sha=sha)
        self.records.save_views(identity, views)

    def read(self, identity: Identity, rel: str) -> bytes:
        """Read ``rel`` and remember it as seen (FileNotFoundError when it does not exist)."""
        data = read_regular(self.fs, self.fs.resolve(rel), rel)
        self.observe(identity, rel, content_sha(data))
        return data

    # -- mutations -----------------------------------------------------------------------------
    def mutate(
        self,
        identity: Identity,
        mutation: Mutation,
        journal: GitJournal | None = None,
        called: CalledAs = BARE,
    ) -> MutationOutcome:
        """Check and apply ``mutation`` as ``identity``; see the module docstring. Its
        refusals name the tools as ``called`` says the caller's model calls them.

        Raises :class:`GateRefusalError` (or another ``RetriableError``: an edit that does not
        match, a patch whose context differs) with nothing written; ``PathEscapeError``,
        ``InvalidPathError`` and ``OSError`` are left to the caller to word.
        """
        if isinstance(mutation, MakeDir):
            return self._mkdir(mutation)
        if isinstance(mutation, WriteFile) and _names_a_folder(mutation.path):
            raise RetriableError(
                f"{excerpt(mutation.path)} names a folder (it ends with '/', '.' or '..'): give "
                f"the file's name, or make a folder with {called('workspace_mkdir')}. Nothing "
                f"was written."
            )
        targets = self._targets(mutation)
        names = sorted({self.records.path_lock_name(rel) for rel in targets})
        unrecorded: str | None = None
        with ExitStack() as stack:
            if journal is not None:
                stack.enter_context(self.records.lock("journal"))
                try:
                    journal.ensure()
                    if not self.records.exec_running():  # a run's changes are the run's
                        journal.commit_out_of_band()
                except Exception as exc:  # the journal is a record: never the gate
                    unrecorded, journal = _journal_failure(exc), None
            for name in names:
                stack.enter_context(self.records.lock(name))
            outcome = self._apply(identity, mutation, targets, called)
            if journal is not None and outcome.changes:
                paths = [c.path for c in outcome.changes]
                try:
                    outcome.commit = journal.commit(identity, _commit_message(outcome), paths)
                    outcome.left_out = journal.left_out
                except Exception as exc:  # the journal is a record: never the gate
                    unrecorded = _journal_failure(exc)
            if unrecorded is not None and outcome.changes:
                outcome.unrecorded = unrecorded
            return outcome

    def _targets(self, mutation: Mutation) -> dict[str, Path]:
        """rel path → resolved path of every file the mutation may touch (in the tree)."""
        if isinstance(mutation, PatchFiles):
            try:
                patches = parse_patch(mutation.patch)
            except PatchError as exc:
                raise RetriableError(
                    f"The patch cannot be read: {exc}. Nothing was written."
                ) from None
            rels: list[str] = []
            for patch in patches:
                if patch.old_path and patch.new_path and patch.old_path != patch.new_path:
                    raise RetriableError(
                        f"The patch renames {patch.old_path} to {patch.new_path}; renames are not "
                        f"supported. Patch the file, then create the new one and delete the old."
                    )
                rels.append(patch.path)
            targets = {self.fs.relative(self.fs.resolve(r)): self.fs.resolve(r) for r in rels}
            return targets
        assert isinstance(mutation, WriteFile | EditFile | DeleteFile)
        if isinstance(mutation, DeleteFile):
            named = self.fs.entry(mutation.path)  # a link is deleted, never followed
            if _not_a_file(named):
                return {self.fs.relative(named): named}
        path = self.fs.resolve(mutation.path)
        rel = self.fs.relative(path)
        if rel == ".":
            raise RetriableError("That path is the workspace itself; name a file inside it.")
        if isinstance(mutation, DeleteFile) and path.is_dir():
            files = {self.fs.relative(p): p for p in self.fs.iter_files(path)}
            return {rel: path, **files}
        return {rel: path}

    def _apply(
        self, identity: Identity, mutation: Mutation, targets: dict[str, Path], called: CalledAs
    ) -> MutationOutcome:
        if isinstance(mutation, DeleteFile) and len(targets) == 1:
            [(rel, named)] = targets.items()
            if _not_a_file(named):  # checked again under the lock
                return self._remove_entry(identity, rel, named)
        views = self.records.load_views(identity)
        current: dict[str, bytes | None] = {}
        for rel, p in targets.items():
            try:
                current[rel] = _current(self.fs, p, rel, called)
            except FileTooLargeError as exc:
                current[rel] = self._too_large(mutation, rel, exc, views, called)
        failure: RetriableError | None = None
        try:
            proposed = self._compute(mutation, targets, current, called)
        except RetriableError as exc:  # the gate's verdict comes first; this one after
            failure, proposed = exc, {}
        for rel in targets:
            after = proposed.get(rel, current[rel])
            self._check(mutation, rel, current[rel], after, views, called, failure is None)
        if failure is not None:
            raise failure
        entries = [
            WriteEntry(targets[rel], data) for rel, data in proposed.items() if data != current[rel]
        ]
        self.fs.write_many(entries)
        changes: list[FileChange] = []
        if isinstance(mutation, DeleteFile):
            root_rel, root = next(iter(targets.items()))
            if root.is_dir() and not root.is_symlink():
                self.fs.remove_tree(root)
                changes.append(FileChange(path=root_rel, action="deleted"))
        for rel, data in proposed.items():
            before = current[rel]
            if data == before:
                continue
            sha = content_sha(data) if data is not None else None
            if sha is None:
                views.pop(rel, None)
            else:
                views[rel] = Observation(sha=sha)
            last = LastWrite(agent=identity.name, team=identity.team, op=mutation.op, sha=sha)
            self.records.set_last_write(rel, last)
            added, removed = line_counts(_text_or_empty(before), _text_or_empty(data))
            action = "deleted" if data is None else "created" if before is None else "modified"
            changes.append(FileChange(path=rel, action=action, added=added, removed=removed))
        self.records.save_views(identity, views)
        return MutationOutcome(op=mutation.op, changes=changes, summary=_summary(mutation, changes))

    def _too_large(
        self,
        mutation: Mutation,
        rel: str,
        exc: FileTooLargeError,
        views: dict[str, Observation],
        called: CalledAs,
    ) -> bytes:
        """What stands for a file over :data:`MAX_CHANGE_BYTES`, never read: nothing (``b""``)
        for a delete by an agent that never read it — there is nothing to compare, and
        reading gigabytes (a command's runaway log) to delete them could end the process.
        Any other mutation of it is refused on its size, and so is a delete by an agent
        that read it when it was smaller (it has changed since)."""
        if isinstance(mutation, DeleteFile) and rel not in views:
            return b""
        if rel in views:
            raise GateRefusalError(
                f"Refused: {rel} has changed since you last read it — it is now "
                f"{exc.size:,} bytes, more than the {exc.limit:,} the workspace tools read. "
                f"Nothing was written. Look at it with a command (head, tail, ls -l) to decide "
                f"what to do with it."
            )
        raise RetriableError(
            f"{rel} is {exc.size:,} bytes, more than the {exc.limit:,} the workspace tools "
            f"change: nothing was written. Delete it with {called('workspace_delete')}, or "
            f"change it with a command."
        )

    def _remove_entry(self, identity: Identity, rel: str, named: Path) -> MutationOutcome:
        """Delete the symlink, pipe, socket or device ``named`` itself: it holds no content
        of its own, so nothing the gate guards is destroyed (a link's target stays)."""
        what = _kind_of(named)
        if what == "symlink":
            where = os.readlink(named)
            detail = f"the symlink {rel} (it pointed to {excerpt(where)}, which is left as it is)"
        else:
            detail = f"{rel} ({what}, not a regular file)"
        self.fs.unlink(named)
        self.records.set_last_write(
            rel, LastWrite(agent=identity.name, team=identity.team, op="delete", sha=None)
        )
        return MutationOutcome(
            op="delete",
            changes=[FileChange(path=rel, action="deleted")],
            summary=f"Deleted {detail}.",
        )

    def _check(
        self,
        mutation: Mutation,
        rel: str,
        current: bytes | None,
        proposed: bytes | None,
        views: dict[str, Observation],
        called: CalledAs,
        known: bool = True,
    ) -> None:
        seen = views.get(rel)
        if seen is not None:
            if current is None:
                if isinstance(mutation, DeleteFile):
                    return  # it is gone already: the delete destroys nothing
                raise GateRefusalError(refusal_deleted(rel, self.records.last_write(rel), called))
            sha = content_sha(current)
            if sha != seen.sha:
                last = self.records.last_write(rel)
                if last is not None and last.sha != sha:
                    last = None  # the gate's last write is not what is there: changed outside
                raise GateRefusalError(
                    refusal_changed(
                        rel,
                        _text_or_none(current),
                        _text_or_none(proposed),
                        last,
                        known=known,
                        called=called,
                    )
                )
            return
        if current is not None and isinstance(mutation, WriteFile):
            raise GateRefusalError(
                refusal_unread(rel, _text_or_none(current), _text_or_none(proposed), called)
            )

    def _compute(
        self,
        mutation: Mutation,
        targets: dict[str, Path],
        current: dict[str, bytes | None],
        called: CalledAs,
    ) -> dict[str, bytes | None]:
        """rel → new bytes (None: delete) for every target; RetriableError when it cannot."""
        if isinstance(mutation, WriteFile):
            [rel] = targets
            return {rel: _utf8(mutation.content, rel)}
        if isinstance(mutation, DeleteFile):
            root_rel, root = next(iter(targets.items()))
            if not root.exists() and not root.is_symlink():
                raise RetriableError(f"File not found: {mutation.path}")
            if (
                root.is_dir()
                and not root.is_symlink()
                and len(targets) > 1
                and not mutation.recursive
            ):
                raise RetriableError(
                    f"{root_rel} is a directory with {counted(len(targets) - 1, 'file')} in it; "
                    "delete it with recursive=true to remove it and everything inside"
                )
            return {rel: None for rel in targets if current[rel] is not None}
        if isinstance(mutation, EditFile):
            [rel] = targets
            text = self._text(rel, current[rel], called)
            edits = [EditSpec(e.old_string, e.new_string, e.replace_all) for e in mutation.edits]
            if not edits:
                raise RetriableError(
                    "No edit was given: pass at least one old_string/new_string pair."
                )
            try:
                new_text, _ = apply_edits(text, edits, rel, called("workspace_write"))
            except EditError as exc:
                raise RetriableError(f"{exc}") from None
            return {rel: _utf8(new_text, rel)}
        assert isinstance(mutation, PatchFiles)
        out: dict[str, bytes | None] = {}
        for patch in parse_patch(mutation.patch):
            rel = self.fs.relative(self.fs.resolve(patch.path))
            out[rel] = self._patched(rel, current[rel], patch, called)
        return out

    def _patched(
        self, rel: str, current: bytes | None, patch: FilePatch, called: CalledAs
    ) -> bytes | None:
        original = None if current is None else self._text(rel, current, called)
        try:
            result = render_file_patch(original, patch)
        except PatchError as exc:
            raise RetriableError(f"The patch does not apply: {exc}") from None
        return None if result is None else _utf8(result, rel)

    @staticmethod
    def _text(rel: str, data: bytes | None, called: CalledAs) -> str:
        if data is None:
            raise RetriableError(f"File not found: {rel}")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RetriableError(
                f"{rel} is not UTF-8 text, so it cannot be edited or patched; replace it whole "
                f"with {called('workspace_write')} (after reading it) instead"
            ) from None

    def _mkdir(self, mutation: MakeDir) -> MutationOutcome:
        path = self.fs.resolve(mutation.path)
        rel = self.fs.relative(path)
        if path.exists() and not path.is_dir():
            raise RetriableError(f"{rel} exists and is a file, not a directory")
        existed = path.is_dir()
        self.fs.make_dirs(path)
        changes = [] if existed else [FileChange(path=rel, action="directory")]
        summary = f"{rel}/ already exists." if existed else f"Created directory {rel}/."
        return MutationOutcome(op="mkdir", changes=changes, summary=summary)


def _kind_of(named: Path) -> str:
    """What the entry at ``named`` is, unfollowed: symlink, a pipe, a socket, a device..."""
    mode = os.lstat(named).st_mode
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _not_a_file(named: Path) -> bool:
    """Whether ``named`` (unfollowed) exists and is neither a regular file nor a folder."""
    try:
        mode = os.lstat(named).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _current(fs: Filesystem, path: Path, rel: str, called: CalledAs) -> bytes | None:
    """What a mutation would replace at ``path``: its bytes, or None when nothing (or a
    folder) is there; a ``RetriableError`` when it is a pipe, socket or device — the model
    named something that is not a file, and replacing it would lose it silently.
    :class:`FileTooLargeError` for a file over :data:`MAX_CHANGE_BYTES`, none of it read."""
    if not os.path.lexists(path) or path.is_dir():
        return None
    try:
        size = os.stat(path).st_size
    except OSError:  # the read below says what is wrong
        size = 0
    if size > MAX_CHANGE_BYTES:
        raise FileTooLargeError(rel, size, MAX_CHANGE_BYTES)
    return read_regular(fs, path, rel, MAX_CHANGE_BYTES, called)


def _text_or_none(data: bytes | None) -> str | None:
    if data is None:
        return None
    return data.decode("utf-8", errors="replace")


def _text_or_empty(data: bytes | None) -> str:
    return _text_or_none(data) or ""


def _names_a_folder(path: str) -> bool:
    """Whether a write's ``path`` ends as a folder does (``new/``, ``a/.``, ``a/b/..``).
    ``.`` alone is the tree itself, said where it resolves."""
    _, slash, last = path.rpartition("/")
    return bool(slash) and last in ("", ".", "..")


def _journal_failure(exc: BaseException) -> str:
    """Log a journal step that failed and say it in a line. The journal is a record, not
    the gate: its failure — whatever it raises — never stops a mutation, nor is the
    mutation called failed (the model would only write it again)."""
    logger.warning("workspace journal step failed: %r", exc)
    return clip(exception_words(exc) or type(exc).__name__, 300)


def _commit_message(outcome: MutationOutcome) -> str:
    paths = ", ".join(c.path for c in outcome.changes[:5])
    more = f" (+{len(outcome.changes) - 5} more)" if len(outcome.changes) > 5 else ""
    return f"{outcome.op} {paths}{more}"


def _summary(mutation: Mutation, changes: Sequence[FileChange]) -> str:
    if not changes:
        return "Nothing changed: the file already holds exactly that."
    parts = []
    for change in changes:
        if change.action == "deleted":
            parts.append(f"deleted {change.path}")
        elif change.action == "created":
            parts.append(f"created {change.path} ({counted(change.added, 'line')})")
        else:
            parts.append(f"modified {change.path} (+{change.added} -{change.removed} lines)")
    verb = {
        "write": "Wrote",
        "edit": "Edited",
        "multi_edit": "Edited",
        "patch": "Patched",
        "delete": "Deleted",
    }
    head = verb.get(mutation.op, "Done")
    return f"{head}: " + "; ".join(parts) + "."
