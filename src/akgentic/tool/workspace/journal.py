"""GitJournal: accepted mutations committed to a linear history authored by the agent.

The journal is a git repository whose git directory is the tree's sibling ``<leaf>.git``
— outside the tree, so no agent and no sandboxed command can rewrite it. It is off by
default (``WorkspaceTool(git_journal=True)`` turns it on) and it is only a record: the
write gate does not depend on it and is never weakened by its absence.

- Every accepted mutation is one commit, authored (and committed) by the agent that made
  it (:class:`Identity`: its name and team), under the tree's journal lock, so two teams
  or two processes over one tree produce one linear history.
- Changes the journal finds that no accepted mutation explains — a file edited by hand,
  or by something that bypassed the gate — are committed first, as belonging to nobody
  (:data:`NOBODY`), so they are never swept into the next agent's commit.
- The first use seeds a ``.gitignore`` (staging files, caches) and commits it as nobody.
- Graceful absence: without ``git`` on PATH the journal is off, said once in the log;
  every call then answers None.
- A repository inside the tree is never entered: an agent can write ``sub/.git/config``
  (or ``git init sub`` in the sandbox), and git, asked about ``sub``, would run what that
  config says (``core.fsmonitor``) on the host, or refuse every later commit over its
  broken ``HEAD``. So every nested repository is left out of each commit by a pathspec
  and taken out of the index (a gitlink: git runs a git inside a tracked one), status
  never looks into one (``--ignore-submodules=all``), and ``core.fsmonitor`` is off for
  git and any git it starts. What such a folder holds is not in the history.
- The tree's ``.gitattributes`` do not apply (``info/attributes`` outranks them): no
  filter, encoding or end-of-line rule a file of the tree asks for. Git's output is read
  as bytes: a name may hold a carriage return, or bytes that are not UTF-8.
- A file over :data:`~akgentic.tool.workspace.models.MAX_CHANGE_BYTES` (the 20 MB a read
  takes) is left out of every commit — a command can leave a runaway log or a sparse file of
  gigabytes, which ``git add`` would read whole and store — and the commit's message says
  which files were left out and why, in one line (:func:`left_out_note`); the caller reads
  them in :attr:`GitJournal.left_out` to say so too. The history keeps the last version
  it took of such a file.
- Nothing in the tree blocks later commits: a name git refuses (``.GIT/x``) is left out
  (logged), the index's lock a git killed at its timeout left is cleared (under the
  journal lock no other git writes that index), and a commit message is one line. A
  ``.gitignore`` or ``.gitattributes`` that is a FIFO or a device, which git would wait
  on for ever, is named before git runs: each step fails at once until it is removed.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISREG
from typing import ClassVar

from pydantic import ConfigDict

from akgentic.core.serialization import SerializableModel
from akgentic.tool.workspace.models import MAX_CHANGE_BYTES
from akgentic.tool.workspace.workspace import STAGING_PREFIX

__all__ = ["NOBODY", "GitJournal", "Identity", "JournalEntry", "left_out_note"]

logger = logging.getLogger("akgentic.tool.workspace")

_GITIGNORE = f"""# seeded by the akgentic workspace journal
{STAGING_PREFIX}*
__pycache__/
*.pyc
.pytest_cache/
"""
_ATTRIBUTES = "* -text -filter -ident -diff -merge !eol !working-tree-encoding\n"
"""The journal's own attributes (``info/attributes``): every file stored as its bytes."""
_absence_logged = False
_absence_lock = threading.Lock()


def _seed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless something is there already — a symlink too,
    dangling or not: never followed out of the tree."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as seeded:
        seeded.write(text)


def _said(output: bytes) -> str:
    """What git wrote, on one line of text (for an error or the log)."""
    return " ".join(output.decode("utf-8", "replace").split())


def _one_line(message: str) -> str:
    """A commit message on one line of ordinary characters: a control character in a
    command an agent ran (a newline, the separators ``log`` reads) is a space there."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in message)


_READ_BY_GIT = frozenset({".gitignore", ".gitattributes"})
"""The tree's own files git opens as it walks the tree, whatever they are."""


def _files_git_would_wait_on(tree: Path) -> list[str]:
    """The tree's ``.gitignore`` and ``.gitattributes`` that are FIFOs or devices (one a
    command made in the sandbox): git opens them to read, and that open waits for a writer
    that never comes — every journal step would stall to its timeout. Symlinks are not
    followed; nested repositories are looked in too (git enters one it finds invalid)."""
    found: list[str] = []
    folders = [tree]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif (
                entry.name in _READ_BY_GIT
                and not entry.is_file(follow_symlinks=False)
                and not entry.is_symlink()
            ):
                found.append(os.path.relpath(entry.path, tree))
    return sorted(found)


def left_out_note(paths: Sequence[str], limit: int | None = None) -> str:
    """One line saying which files a commit left out for their size (over ``limit``, by
    default :attr:`GitJournal.max_file_bytes`), and why: the first ten named."""
    limit = GitJournal.max_file_bytes if limit is None else limit
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return f"left out of the journal, over the {limit:,} bytes it takes: {shown}"


def _over(tree: Path, paths: Sequence[str], limit: int) -> list[str]:
    """The ``paths`` (tree-relative, as status spells them) that are files larger than
    ``limit``: their size is read (``lstat``), never their bytes."""
    found = []
    for rel in paths:
        try:
            stat = os.lstat(os.path.join(tree, rel))
        except OSError:  # deleted: nothing to read
            continue
        if S_ISREG(stat.st_mode) and stat.st_size > limit:
            found.append(rel)
    return found


class Identity(SerializableModel):
    """Who made a change: the agent's name and its team — the author of its commits and the
    key of what it has read."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str
    team: str = ""

    @property
    def key(self) -> str:
        """A file-name-safe key, unique per (team, agent)."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.name).strip("._") or "agent"
        team = re.sub(r"[^A-Za-z0-9-]+", "", self.team)[:36] or "noteam"
        return f"{team}--{safe}"

    @property
    def email(self) -> str:
        local = re.sub(r"[^A-Za-z0-9._-]+", "", self.name.lower()) or "agent"
        domain = (
            re.sub(r"[^a-z0-9-]+", "", self.team.lower())[:8] or "local"
        ) + ".akgentic.invalid"
        return f"{local}@{domain}"


NOBODY = Identity(name="nobody", team="")
"""The author of out-of-band changes: what the journal found and no accepted mutation made."""


class JournalEntry(SerializableModel):
    """One commit as ``log`` reports it."""

    sha: str
    author: str
    email: str
    message: str


class GitJournal:
    """The journal of one tree; see the module docstring."""

    timeout: ClassVar[float] = 30.0
    """Seconds any git call may take."""
    max_file_bytes: ClassVar[int] = MAX_CHANGE_BYTES
    """The largest file a commit takes; a larger one is left out (see the module docstring)."""

    def __init__(self, tree: Path, git_dir: Path) -> None:
        self.tree = tree
        self.git_dir = git_dir
        self.git = shutil.which("git")
        self._ready = False
        self.left_out: list[str] = []
        """The files the last :meth:`commit` left out for their size (sorted), whether or
        not it committed anything else; empty when it left out none."""

    @property
    def available(self) -> bool:
        """Whether git is on PATH (the journal degrades off, said once, when it is not)."""
        if self.git is None:
            global _absence_logged
            with _absence_lock:
                if not _absence_logged:
                    logger.warning("git is not on PATH: the workspace journal is off")
                    _absence_logged = True
            return False
        return True

    def _env(self, author: Identity | None = None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.tree),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",  # a status never takes the index's lock
            "HOME": str(self.git_dir),
            "LC_ALL": "C",
        }
        who = author or NOBODY
        env.update(
            GIT_AUTHOR_NAME=who.name,
            GIT_AUTHOR_EMAIL=who.email,
            GIT_COMMITTER_NAME=who.name,
            GIT_COMMITTER_EMAIL=who.email,
        )
        return env

    def _run(
        self, *args: str, author: Identity | None = None, given: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """git ``args`` on the journal, its output as bytes: a name in the tree may hold a
        carriage return, or bytes that are not UTF-8, and text mode would change the one
        and refuse the other."""
        assert self.git is not None
        return subprocess.run(
            [
                self.git,
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.quotepath=false",
                "-c",
                "core.fsmonitor=false",  # passed on to any git this one starts
                *args,
            ],
            cwd=self.tree,
            env=self._env(author),
            input=given,
            capture_output=True,
            timeout=self.timeout,
        )

    def _git(
        self,
        *args: str,
        author: Identity | None = None,
        check: bool = True,
        given: bytes | None = None,
    ) -> str:
        """git ``args``; its output with every byte kept (``os.fsdecode``: a name that is
        not UTF-8 comes back as the same bytes when passed to git again). RuntimeError
        saying what git said when it fails (``check``)."""
        done = self._run(*args, author=author, given=given)
        if check and done.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {_said(done.stderr or done.stdout)}")
        return os.fsdecode(done.stdout)

    def ensure(self) -> bool:
        """Create the repository (and seed ``.gitignore``) on first use; False without git."""
        if self._ready:
            return True
        if not self.available:
            return False
        new = not (self.git_dir / "HEAD").exists()
        if new:
            self.tree.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet", "--initial-branch=main")
        self._neutral_attributes()  # a journal made before it was written gets it too
        if new:
            _seed(self.tree / ".gitignore", _GITIGNORE)
            self.commit(NOBODY, "journal: seeded .gitignore")
        self._ready = True
        return True

    def _neutral_attributes(self) -> None:
        """Write ``info/attributes`` in the history's own folder, which outranks every
        ``.gitattributes`` of the tree: no filter, encoding, end-of-line or diff driver a
        file of the tree asks for applies to the journal (a ``working-tree-encoding`` there
        would refuse every commit; a filter would want a program)."""
        info = self.git_dir / "info"
        info.mkdir(parents=True, exist_ok=True)
        attributes = info / "attributes"
        if not attributes.is_file() or attributes.read_text(encoding="utf-8") != _ATTRIBUTES:
            attributes.write_text(_ATTRIBUTES, encoding="utf-8")

    def _drop_repositories(self) -> None:
        """Take every nested repository out of the index (a "gitlink": one a journal made
        before these rules committed, or one an exec made between a status and its add):
        git asked about a tracked one runs a git inside it, with that repository's config
        and attributes."""
        listed = self._git("ls-files", "--stage", "-z")
        links = [e.split("\t", 1)[1] for e in listed.split("\0") if e.startswith("160000 ")]
        if links:
            given = b"".join(os.fsencode(link) + b"\0" for link in links)
            self._git("update-index", "--force-remove", "-z", "--stdin", given=given)

    def _status(self) -> tuple[set[str], list[str]]:
        """The paths that changed (nested repositories aside), and the nested repositories
        (untracked folders holding a ``.git``: status names them ``sub/``, without entering
        them)."""
        waiting = _files_git_would_wait_on(self.tree)
        if waiting:
            named = ", ".join(waiting[:3]) + (
                f" and {len(waiting) - 3} more" if len(waiting) > 3 else ""
            )
            what = "is a FIFO or a device" if len(waiting) == 1 else "are FIFOs or devices"
            raise RuntimeError(
                f"{named} {what}, not a file, and git would wait on it for ever: remove "
                f"it, and the journal records again"
            )
        out = self._git(
            "status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all"
        )
        changed: set[str] = set()
        nested: list[str] = []
        entries = iter(out.split("\0"))
        for entry in entries:
            if not entry:
                continue
            code, path = entry[:2], entry[3:]
            if code == "??" and path.endswith("/"):
                nested.append(path.rstrip("/"))
                continue
            changed.add(path)
            if "R" in code or "C" in code:
                changed.add(next(entries, ""))  # a rename's or copy's source follows
        changed.discard("")
        return changed, nested

    def dirty(self) -> bool:
        """Whether the tree holds changes the history does not (nested repositories aside)."""
        return bool(self._status()[0])

    def commit(
        self, author: Identity, message: str, paths: Sequence[str] | None = None
    ) -> str | None:
        """Commit what changed, as ``author``, nested repositories left out; the new sha,
        or None if nothing did.

        ``paths`` (tree-relative) narrows the commit to those files: an accepted mutation
        commits what it wrote and nothing else, so a file a command rewrites meanwhile is
        never its agent's. Without ``paths``, everything that changed is committed.

        A changed file over :attr:`max_file_bytes` is never added: it is named in
        :attr:`left_out` and, when the commit is made, in its message.
        """
        self.left_out = []
        if not self.available:
            return None
        (self.git_dir / "index.lock").unlink(missing_ok=True)  # a git killed at its timeout
        self._drop_repositories()
        changed, nested = self._status()
        if paths is not None:
            changed &= set(paths)  # status's own spelling: a path it lists, git can add
        self.left_out = _over(self.tree, sorted(changed), self.max_file_bytes)
        changed -= set(self.left_out)
        if not changed:
            return None
        if paths is not None:
            specs = [f":(literal){p}" for p in sorted(changed)]
        else:  # on stdin: any number
            left_out = [*nested, *self.left_out]
            specs = [".", *(f":(exclude,literal){p}" for p in left_out)]
        if self.left_out:
            message = f"{message} [{left_out_note(self.left_out, self.max_file_bytes)}]"
        added = self._run(
            "add",
            "--all",
            "--ignore-errors",  # a name git refuses ('.GIT/x') is left out, not every commit
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            given=b"".join(os.fsencode(spec) + b"\0" for spec in specs),
        )
        if added.returncode not in (0, 1):  # 1: some paths could not be added
            raise RuntimeError(f"git add failed: {_said(added.stderr)}")
        if added.returncode == 1:
            said = _said(added.stderr)[:500]
            logger.warning("the workspace journal left out what git refused: %s", said)
        self._drop_repositories()  # one made after the status was added as a gitlink
        if not self._staged():
            return None
        self._git(
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty-message",
            "-m",
            _one_line(message),
            author=author,
        )
        return self._git("rev-parse", "HEAD").strip()

    def _staged(self) -> bool:
        return self._run("diff", "--cached", "--quiet", "--ignore-submodules=all").returncode != 0

    def commit_out_of_band(self, message: str = "out-of-band changes") -> str | None:
        """Commit what changed outside accepted mutations, as :data:`NOBODY`."""
        if not self.available or not self.dirty():
            return None
        return self.commit(NOBODY, message)

    def log(self, limit: int = 50) -> list[JournalEntry]:
        """The newest ``limit`` commits, newest first."""
        if not self.available or not (self.git_dir / "HEAD").exists():
            return []
        done = self._run("log", f"-n{limit}", "--format=%H%x1f%an%x1f%ae%x1f%s%x1e")
        out = done.stdout.decode("utf-8", "replace")  # shown to people: every line text
        entries = []
        for record in out.split("\x1e"):
            fields = record.strip().split("\x1f")
            if len(fields) == 4:
                entries.append(
                    JournalEntry(
                        sha=fields[0], author=fields[1], email=fields[2], message=fields[3]
                    )
                )
        return entries
