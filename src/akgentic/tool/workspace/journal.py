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
  broken ``HEAD``. So every nested repository is left out of each commit by a pathspec,
  status never looks into one (``--ignore-submodules=all``), and ``core.fsmonitor`` is
  off for git and any git it starts. What such a folder holds is not in the history.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict

from akgentic.core.serialization import SerializableModel
from akgentic.tool.workspace.workspace import STAGING_PREFIX

__all__ = ["NOBODY", "GitJournal", "Identity", "JournalEntry"]

logger = logging.getLogger("akgentic.tool.workspace")

_GITIGNORE = f"""# seeded by the akgentic workspace journal
{STAGING_PREFIX}*
__pycache__/
*.pyc
.pytest_cache/
"""
_absence_logged = False
_absence_lock = threading.Lock()


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

    def __init__(self, tree: Path, git_dir: Path) -> None:
        self.tree = tree
        self.git_dir = git_dir
        self.git = shutil.which("git")
        self._ready = False

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

    def _run(self, *args: str, author: Identity | None = None) -> subprocess.CompletedProcess[str]:
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
            capture_output=True,
            text=True,
            timeout=self.timeout,
        )

    def _git(self, *args: str, author: Identity | None = None, check: bool = True) -> str:
        done = self._run(*args, author=author)
        if check and done.returncode != 0:
            raise RuntimeError(
                f"git {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}"
            )
        return done.stdout

    def ensure(self) -> bool:
        """Create the repository (and seed ``.gitignore``) on first use; False without git."""
        if self._ready:
            return True
        if not self.available:
            return False
        if not (self.git_dir / "HEAD").exists():
            self.tree.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet", "--initial-branch=main")
            ignore = self.tree / ".gitignore"
            if not ignore.exists():
                ignore.write_text(_GITIGNORE, encoding="utf-8")
            self.commit(NOBODY, "journal: seeded .gitignore")
        self._ready = True
        return True

    def _status(self) -> tuple[bool, list[str]]:
        """Whether anything but nested repositories changed, and the nested repositories
        (untracked folders holding a ``.git``: status names them ``sub/``, without entering
        them)."""
        out = self._git(
            "status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all"
        )
        changed = False
        nested: list[str] = []
        entries = iter(out.split("\0"))
        for entry in entries:
            if not entry:
                continue
            code, path = entry[:2], entry[3:]
            if "R" in code or "C" in code:
                next(entries, None)  # a rename's or copy's source follows
            if code == "??" and path.endswith("/"):
                nested.append(path.rstrip("/"))
            else:
                changed = True
        return changed, nested

    def dirty(self) -> bool:
        """Whether the tree holds changes the history does not (nested repositories aside)."""
        return self._status()[0]

    def commit(self, author: Identity, message: str) -> str | None:
        """Commit everything that changed, as ``author``, nested repositories left out;
        the new sha, or None if nothing did."""
        if not self.available:
            return None
        changed, nested = self._status()
        if not changed:
            return None
        self._git("add", "--all", "--", ".", *(f":(exclude,literal){p}" for p in nested))
        if not self._staged():
            return None
        self._git(
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty-message",
            "-m",
            message,
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
        out = self._git("log", f"-n{limit}", "--format=%H%x1f%an%x1f%ae%x1f%s%x1e", check=False)
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
