"""Where a workspace is, and the one rule every path inside it goes through.

A workspace is a three-segment path under the workspaces root::

    <AKGENTIC_WORKSPACES_ROOT>/<scope>/<kind>/<leaf>

- ``<kind>`` says how the leaf was derived: ``_team/<team_id>`` (the default),
  ``_id/<workspace_id>`` (a named tree) or ``_meta/<joined values>`` (keyed by fields of
  the team's metadata).
- ``<scope>`` is the owning principal (:func:`user_segment`), unless the card asks for a
  sharable tree *and* the platform permits that kind through
  ``AKGENTIC_WORKSPACE_SHARED_KINDS`` (:func:`permitted_shared_kinds`): then it is the
  reserved ``_shared``. Three kinds times two scopes: the six cells. A shared request the
  platform does not permit fails the bind; it never falls back to a private tree.

Two siblings of the tree belong to the tree but are never inside it — ``<leaf>.index``
(the metadata sibling: locks, what each agent last read, one YAML record per indexed
document, the exec lease and run records) and ``<leaf>.git`` (the journal). That is why a
``workspace_id`` may not end in ``.git`` or ``.index``: :func:`validate_workspace_id`.

:meth:`Filesystem.resolve` is the one path rule: every path an agent names is anchored
to the tree; absolute paths, ``..`` that climbs out and symlinks whose target leaves the
tree raise :class:`PathEscapeError`; NUL bytes, undecodable text, overlong names and the
names of staging files raise :class:`InvalidPathError`.

What the rule resolved is then reached from the tree's root one name at a time, never
following a symlink (:meth:`Filesystem.open_dir`, :meth:`Filesystem.read_bytes`): a
command in the sandbox can swap a folder of the tree for a symlink to anywhere on the host
between the rule's check and the open, and a path opened by name would follow it out. A
name that has become a symlink meanwhile is a :class:`PathEscapeError`, as the rule would
say now. Every read, write, rename, removal and listing of the tree's files goes through
a folder reached that way, the walk's (:meth:`Filesystem.walk`) included.
:meth:`Filesystem.write` is atomic (a staging file in the same directory, renamed over the
target), and :meth:`Filesystem.write_many` stages every file before renaming any. Atomic
means a reader sees the old content or the new, never a mix; durability across a power cut
is the filesystem's (ext4 flushes a file's data before a rename replaces it).
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import ConfigDict

from akgentic.core.data_home import user_data_dir
from akgentic.core.serialization import SerializableModel

__all__ = [
    "KIND_ID",
    "KIND_META",
    "KIND_TEAM",
    "PRINCIPAL_ENV",
    "SHARED_KINDS_ENV",
    "SHARED_SCOPE",
    "STAGING_PREFIX",
    "WORKSPACES_ROOT_ENV",
    "FileTooLargeError",
    "Filesystem",
    "InvalidPathError",
    "NotRegularFileError",
    "PathEscapeError",
    "Workspace",
    "WorkspaceConfigError",
    "WorkspacePath",
    "WriteEntry",
    "get_workspace",
    "is_staging_name",
    "leaf_segment",
    "permitted_shared_kinds",
    "resolve_workspace_path",
    "user_segment",
    "utf8_name",
    "validate_workspace_id",
    "workspaces_root",
]

WORKSPACES_ROOT_ENV = "AKGENTIC_WORKSPACES_ROOT"
SHARED_KINDS_ENV = "AKGENTIC_WORKSPACE_SHARED_KINDS"
PRINCIPAL_ENV = "AKGENTIC_PRINCIPAL"

SHARED_SCOPE = "_shared"
KIND_TEAM = "_team"
KIND_ID = "_id"
KIND_META = "_meta"
_KIND_NAMES = {"team": KIND_TEAM, "id": KIND_ID, "meta": KIND_META}
_RESERVED = {KIND_TEAM, KIND_ID, KIND_META, SHARED_SCOPE, "team", "id", "meta", ".", ".."}
_SIBLING_SUFFIXES = (".git", ".index")
_ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,128}")
_SEGMENT_BAD = re.compile(r"[^A-Za-z0-9._-]+")

STAGING_PREFIX = ".akgentic-staging-"
"""Staging files of atomic writes start with this; listings, search and the journal skip
them, and no agent path may name one."""

_MAX_PATH_BYTES = 4096
_MAX_NAME_BYTES = 255


def _read_umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, process-wide)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


_UMASK = _read_umask()


class WorkspaceConfigError(ValueError):
    """A workspace that cannot be derived or is not permitted; the message says what to do."""


class PathEscapeError(PermissionError):
    """A path that would leave the workspace tree (absolute, ``..``, or a symlink out)."""


class InvalidPathError(ValueError):
    """A path that names nothing a workspace can hold (NUL, bad text, too long, staging)."""


class NotRegularFileError(OSError):
    """A read of something that is not a regular file: a pipe, a socket or a device (a
    command in the sandbox can make one), which a plain read would block on for ever."""


class FileTooLargeError(OSError):
    """A read of a file larger than the reader takes, refused on its size before any of it
    is read (a command can leave a file of gigabytes: a runaway log, a sparse file)."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size:,} bytes, over the {limit:,} a read takes", name)
        self.size = size
        self.limit = limit


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def validate_workspace_id(value: str) -> str:
    """``value`` if it is a valid ``workspace_id``; ValueError saying what is wrong otherwise.

    1 to 128 characters of ``[A-Za-z0-9._-]``, not a kind name (``_team``, ``_id``,
    ``_meta``, ``_shared``, ``.``, ``..``) and not ending in ``.git`` or ``.index`` (the
    tree's siblings).
    """
    if not isinstance(value, str) or not _ID_PATTERN.fullmatch(value):
        raise ValueError(
            f"workspace_id {value!r} must be 1 to 128 characters of letters, digits, "
            f"'.', '_' or '-'"
        )
    if value in _RESERVED:
        raise ValueError(f"workspace_id {value!r} is a reserved name; choose another")
    if value.endswith(_SIBLING_SUFFIXES):
        raise ValueError(
            f"workspace_id {value!r} may not end in .git or .index: those names belong to "
            f"a tree's journal and metadata"
        )
    return value


def workspaces_root() -> Path:
    """``AKGENTIC_WORKSPACES_ROOT``, else ``workspaces`` in the user's akgentic data folder
    (``~/.local/share/akgentic/workspaces`` on Linux, beside the CLI's default store; see
    :func:`akgentic.core.user_data_dir`)."""
    configured = os.environ.get(WORKSPACES_ROOT_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return user_data_dir() / "workspaces"


def _segment(value: str, fallback: str) -> str:
    cleaned = _SEGMENT_BAD.sub("-", value).strip(".-_")[:128]
    return cleaned or fallback


def user_segment(principal: str | None = None) -> str:
    """The scope of a private tree: the owning principal, made safe as a path segment.

    ``principal``, else ``AKGENTIC_PRINCIPAL``, else the operating-system user. Never
    starts with ``_`` (the reserved scopes do), never ``.``/``..``.
    """
    raw = principal or os.environ.get(PRINCIPAL_ENV, "").strip()
    if not raw:
        try:
            raw = getpass.getuser()
        except Exception:
            raw = "anonymous"
    return _segment(raw, "anonymous")


def leaf_segment(values: Sequence[object]) -> str:
    """The leaf of a metadata-keyed tree: the values, each made safe, joined by ``+``."""
    if not values:
        raise WorkspaceConfigError("a metadata-keyed workspace needs at least one key")
    return "+".join(_segment(str(v), "none") for v in values)


def permitted_shared_kinds() -> frozenset[str]:
    """The kinds (``team``, ``id``, ``meta``) the platform lets cards share, from
    ``AKGENTIC_WORKSPACE_SHARED_KINDS`` (comma-separated; unset or empty: none)."""
    raw = os.environ.get(SHARED_KINDS_ENV, "")
    kinds = {part.strip().lstrip("_").lower() for part in raw.split(",") if part.strip()}
    return frozenset(kinds & set(_KIND_NAMES))


class WorkspacePath(SerializableModel):
    """A resolved three-segment workspace: where its tree and its two siblings are."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    root: str
    scope: str
    kind: str
    leaf: str

    @property
    def name(self) -> str:
        """``<scope>/<kind>/<leaf>``: the workspace's identity, slashes included."""
        return f"{self.scope}/{self.kind}/{self.leaf}"

    @property
    def actor_name(self) -> str:
        """``#Workspace-<scope>/<kind>/<leaf>``: one actor per tree, never per name alone."""
        return f"#Workspace-{self.name}"

    @property
    def tree(self) -> Path:
        return Path(self.root) / self.scope / self.kind / self.leaf

    @property
    def index_dir(self) -> Path:
        """The metadata sibling ``<leaf>.index``."""
        return Path(self.root) / self.scope / self.kind / f"{self.leaf}.index"

    @property
    def git_dir(self) -> Path:
        """The journal's git directory ``<leaf>.git``, outside the tree."""
        return Path(self.root) / self.scope / self.kind / f"{self.leaf}.git"


def resolve_workspace_path(
    *,
    kind: str,
    leaf: str,
    sharable: bool = False,
    principal: str | None = None,
    root: Path | None = None,
) -> WorkspacePath:
    """The :class:`WorkspacePath` of one cell — the one place a workspace path is derived.

    ``kind`` is ``_team``, ``_id`` or ``_meta``. ``sharable`` asks for the ``_shared``
    scope, which the platform must permit for that kind; otherwise
    :class:`WorkspaceConfigError` — never a silent fall-back to a private tree.
    """
    if kind not in _KIND_NAMES.values():
        raise WorkspaceConfigError(f"unknown workspace kind {kind!r}")
    if not leaf or leaf in (".", "..") or "/" in leaf or "\x00" in leaf:
        raise WorkspaceConfigError(f"invalid workspace leaf {leaf!r}")
    if sharable:
        short = kind.lstrip("_")
        permitted = permitted_shared_kinds()
        if short not in permitted:
            allowed = ", ".join(sorted(permitted)) or "none"
            raise WorkspaceConfigError(
                f"this card asks for a shared workspace ({SHARED_SCOPE}/{kind}/{leaf}) but the "
                f"platform does not permit sharing the {short!r} kind ({SHARED_KINDS_ENV} "
                f"permits: {allowed}). Set workspace_sharable=False, or have the operator add "
                f"{short!r} to {SHARED_KINDS_ENV}."
            )
        scope = SHARED_SCOPE
    else:
        scope = user_segment(principal)
    base = (root if root is not None else workspaces_root()).resolve()
    return WorkspacePath(root=str(base), scope=scope, kind=kind, leaf=leaf)


def utf8_name(name: str) -> bool:
    """Whether the file name ``name`` (as the OS gave it) is UTF-8 text: the only names the
    path rule lets a tool reach. One that is not holds surrogates standing for its bytes."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_staging_name(name: str) -> bool:
    """Whether ``name`` (a file name, not a path) is the staging file of an atomic write."""
    return name.startswith(STAGING_PREFIX)


@dataclass(frozen=True, slots=True)
class WriteEntry:
    """One file of :meth:`Filesystem.write_many`: new bytes, or None to delete it."""

    path: Path
    content: bytes | None


@runtime_checkable
class Workspace(Protocol):
    """What the card and the actor need of a tree: the path rule and atomic writes."""

    root: Path

    def resolve(self, path: str) -> Path: ...

    def relative(self, path: Path) -> str: ...

    def write(self, path: Path, content: bytes) -> None: ...

    def write_many(self, entries: Sequence[WriteEntry]) -> None: ...

    def iter_files(self, start: Path | None = None) -> Iterator[Path]: ...


class Filesystem:
    """One tree on the local filesystem; see the module docstring for the rules."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = Path(os.path.realpath(root))

    # -- the path rule ------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        """The absolute, symlink-free location of ``path`` inside the tree.

        Raises :class:`PathEscapeError` for an absolute path, a ``..`` climbing out, or a
        symlink whose target is outside; :class:`InvalidPathError` for NUL bytes, text
        that is not valid Unicode, names longer than 255 bytes or paths longer than 4096,
        and staging names. ``""`` and ``"."`` are the tree itself.
        """
        real = Path(os.path.realpath(self.root.joinpath(*self._parts(path))))
        self._inside(real, path)
        return real

    def entry(self, path: str) -> Path:
        """The location of the entry ``path`` names, its last name *not* followed.

        What a delete acts on: a symlink named by the agent is the link itself, never
        its target (which may be a directory of files, or outside the tree). The
        folders above it are resolved and must be inside the tree, by :meth:`resolve`'s
        rules; ``""`` and ``"."`` are the tree itself.
        """
        parts = self._parts(path)
        if not parts:
            return self.root
        parent = Path(os.path.realpath(self.root.joinpath(*parts[:-1])))
        self._inside(parent, path)
        return parent / parts[-1]

    def _inside(self, real: Path, path: str) -> None:
        if real != self.root and not real.is_relative_to(self.root):
            raise PathEscapeError(path)

    @staticmethod
    def _parts(path: str) -> list[str]:
        """The names of ``path``, ``.`` dropped and ``..`` applied; the errors of
        :meth:`resolve` for anything a workspace path may not be."""
        if not isinstance(path, str):
            raise InvalidPathError(f"a path is text, got {type(path).__name__}")
        if "\x00" in path:
            raise InvalidPathError("the path contains a NUL byte")
        try:
            encoded = path.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidPathError("the path is not valid Unicode text") from None
        if len(encoded) > _MAX_PATH_BYTES:
            raise InvalidPathError(f"the path is longer than {_MAX_PATH_BYTES} bytes")
        if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", path):
            raise PathEscapeError(path)
        stack: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not stack:
                    raise PathEscapeError(path)
                stack.pop()
                continue
            if len(part.encode("utf-8")) > _MAX_NAME_BYTES:
                raise InvalidPathError(f"a name in the path is longer than {_MAX_NAME_BYTES} bytes")
            if is_staging_name(part):
                raise InvalidPathError(f"{part!r} is a staging file name; choose another name")
            stack.append(part)
        return stack

    def relative(self, path: Path) -> str:
        """``path`` (inside the tree) as the agent names it: POSIX, relative, ``.`` for the root."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    # -- reaching what the rule resolved, never through a symlink ------------------------
    def open_dir(self, real: Path, *, create: bool = False) -> int:
        """A descriptor of the folder ``real`` (what :meth:`resolve` answered), reached from
        the tree's root one name at a time with ``O_NOFOLLOW``; the caller closes it.

        ``create`` makes the folders missing on the way. A name on the way that is a
        symlink now (a command swapped a folder since the rule looked) raises
        :class:`PathEscapeError`; one that is a file, ``NotADirectoryError``.
        """
        names = self._names_in_tree(real)
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for name in names:
                child = self._step(fd, name, real, create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _step(self, fd: int, name: str, real: Path, create: bool = False) -> int:
        """A new descriptor of the folder ``name`` inside the folder ``fd`` (left open),
        never through a symlink: the one step of :meth:`open_dir` and :meth:`walk`."""
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: open it all the same
                os.mkdir(name, dir_fd=fd)
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(fd, name):
                raise PathEscapeError(self._shown(real)) from None
            raise
        return child

    def _names_in_tree(self, real: Path) -> tuple[str, ...]:
        try:
            return real.relative_to(self.root).parts
        except ValueError:
            raise PathEscapeError(str(real)) from None

    def _shown(self, real: Path) -> str:
        """``real`` as an error names it: :meth:`relative`, or itself when it is outside."""
        try:
            return self.relative(real)
        except ValueError:
            return str(real)

    def read_bytes(self, real: Path, max_bytes: int | None = None) -> bytes:
        """The bytes of the regular file ``real`` (what :meth:`resolve` answered), opened
        without following a symlink and without blocking, and checked on the open descriptor.

        Raises :class:`PathEscapeError` (a link on the way), :class:`NotRegularFileError` (a
        pipe, socket or device: never read), :class:`FileTooLargeError` (over ``max_bytes``:
        refused on its size, before any of it is read; a file growing meanwhile is read no
        further than the bound) and ``OSError`` (missing, a folder...).
        """
        if real == self.root:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", ".")
        folder = self.open_dir(real.parent)
        try:
            try:
                fd = os.open(real.name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=folder)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise PathEscapeError(self._shown(real)) from None
                raise
        finally:
            os.close(folder)
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", self._shown(real))
            if not stat.S_ISREG(mode):
                raise NotRegularFileError(errno.EINVAL, "not a regular file", self._shown(real))
            if max_bytes is None:
                return handle.read()
            size = os.fstat(fd).st_size
            if size > max_bytes:
                raise FileTooLargeError(self._shown(real), size, max_bytes)
            data = handle.read(size + 1)  # what the stat said, and a byte to see it grow
            if len(data) > size:  # it grew since: read on, never past the bound
                data += handle.read(max_bytes + 1 - len(data))
            if len(data) > max_bytes:
                raise FileTooLargeError(self._shown(real), len(data), max_bytes)
            return data

    def unlink(self, real: Path) -> None:
        """Remove the entry ``real`` names (a file or a link, never followed), if it is there."""
        folder = self.open_dir(real.parent)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(real.name, dir_fd=folder)
        finally:
            os.close(folder)

    def remove_tree(self, real: Path) -> None:
        """Remove the folder ``real`` and everything in it, links removed, never followed."""
        folder = self.open_dir(real.parent)
        try:
            shutil.rmtree(real.name, dir_fd=folder)
        finally:
            os.close(folder)

    def make_dirs(self, real: Path) -> None:
        """Make the folder ``real`` and the folders missing above it."""
        os.close(self.open_dir(real, create=True))

    # -- atomic writes ----------------------------------------------------------------------
    def write(self, path: Path, content: bytes) -> None:
        """Replace ``path`` with ``content`` atomically (readers see old or new, never half)."""
        self.write_many([WriteEntry(path, content)])

    def write_many(self, entries: Sequence[WriteEntry]) -> None:
        """Apply every entry, staging all new contents before renaming any into place.

        A failure while staging leaves every target untouched and removes the staging
        files. Deletions happen after the renames.

        Every file is staged, renamed and removed inside its folder's descriptor
        (:meth:`open_dir`): a folder swapped for a symlink after the rule looked is never
        written through.
        """
        staged: list[tuple[int, str, str]] = []  # (folder, staging name, target name)
        try:
            try:
                for entry in entries:
                    if entry.content is not None:
                        staged.append(self._stage(entry.path, entry.content))
            except BaseException:
                for folder, temp, _ in staged:
                    with contextlib.suppress(OSError):
                        os.unlink(temp, dir_fd=folder)
                raise
            for folder, temp, name in staged:
                os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            for folder, _, _ in staged:
                os.close(folder)
        for entry in entries:
            if entry.content is None:
                self.unlink(entry.path)

    def _stage(self, target: Path, content: bytes) -> tuple[int, str, str]:
        """(the target's folder, the staging file's name, the target's name): ``content``
        written to a new staging file in the target's folder (reached by :meth:`open_dir`,
        made if missing). The caller closes the folder."""
        if target == self.root or target.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(target))
        folder = self.open_dir(target.parent, create=True)
        try:
            try:
                mode = stat.S_IMODE(os.stat(target.name, dir_fd=folder).st_mode)
            except FileNotFoundError:
                mode = 0o666 & ~_UMASK
            temp = f"{STAGING_PREFIX}{target.name[:64]}-{secrets.token_hex(6)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            fd = os.open(temp, flags, mode, dir_fd=folder)
            try:
                view = memoryview(content)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            except BaseException:
                os.close(fd)
                os.unlink(temp, dir_fd=folder)
                raise
            os.close(fd)
        except BaseException:
            os.close(folder)
            raise
        return folder, temp, target.name

    # -- walking ------------------------------------------------------------------------------
    def walk(self, start: Path | None = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Every regular file under ``start`` (the tree by default; a folder inside it), in
        name order within each folder, as its path the agent names it (what
        :meth:`relative` gives) and its scan entry: :meth:`scan`'s regular files. Staging
        files and symlinks are left out, so the walk never leaves the tree.

        The one walk of the tree's files (search, grep, a folder's delete, exec's
        snapshot); see :meth:`scan` for how it reaches each folder and how long an entry's
        ``stat`` can be taken. Search lists and ``stat``s every file on each call, so a
        file's path is built as text."""
        for rel, entry in self.scan(start):
            if entry.is_file(follow_symlinks=False):
                yield rel, entry

    def scan(
        self, start: Path | None = None, enter: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Every entry under ``start`` (the tree by default; a folder inside it) — files,
        folders, symlinks, anything — in name order within each folder, a folder's entries
        before what its subfolders hold, as the path the agent names it and its scan entry.
        Staging files are left out. A subfolder is entered when ``enter`` (given its path)
        says so, by default always; a symlink is never entered.

        Every folder it lists is reached as a read is, by :meth:`open_dir` (from the tree's
        root one name at a time, never through a symlink) or from its parent's descriptor
        with ``O_NOFOLLOW``, and listed through its own descriptor: a command that swaps a
        folder for a symlink to the host while the scan goes cannot make it list a host
        folder's names — the swapped folder is left out, as a folder that went. A listed
        folder's descriptor is kept while its subfolders wait to be opened from it (one
        ``openat`` each); past :data:`_HELD_FOLDERS` kept at once (a command can make a tree
        thousands of folders deep) a folder is reached from the root again, so the scan
        never holds more descriptors than that, whatever the tree.

        An entry is scanned through its folder's descriptor, which is closed when the scan
        moves past the folder: take its ``stat(follow_symlinks=False)`` (one ``lstat``,
        cached on the entry, never a link's target) before asking for the next entry. Its
        ``path`` is its name alone; :meth:`iter_files` gives paths.

        A name that is not UTF-8 text (a command can make one: an archive's old encoding)
        is left out with all it holds: the path rule refuses it, so no tool can reach it,
        and no record or answer can hold it (``workspace_list`` names it as unreachable)."""
        base = start if start is not None else self.root
        top = self.relative(base)
        stack: list[tuple[_HeldFolder | None, Path, str]] = [
            (None, base, "" if top == "." else f"{top}/")
        ]
        held = 0
        try:
            while stack:
                parent, folder, prefix = stack.pop()
                try:
                    if parent is None:
                        fd = self.open_dir(folder)
                    else:
                        fd = self._step(parent.fd, folder.name, folder)
                except OSError:  # gone, or swapped for a link since it was listed: left out
                    continue
                finally:
                    if parent is not None and parent.release():
                        held -= 1
                kept: _HeldFolder | None = None
                try:
                    try:
                        with os.scandir(fd) as it:
                            entries = sorted(it, key=lambda e: e.name)
                    except OSError:
                        continue
                    dirs: list[tuple[Path, str]] = []
                    for entry in entries:
                        name = entry.name
                        if is_staging_name(name) or not utf8_name(name):
                            continue
                        rel = f"{prefix}{name}"
                        if entry.is_dir(follow_symlinks=False) and (enter is None or enter(rel)):
                            dirs.append((folder / name, f"{rel}/"))
                        yield rel, entry
                    if dirs and held < _HELD_FOLDERS:
                        kept, held = _HeldFolder(fd, len(dirs)), held + 1
                    stack.extend((kept, path, shown) for path, shown in reversed(dirs))
                finally:
                    if kept is None:
                        os.close(fd)
        finally:  # stopped early: the folders still waiting on their subfolders are closed
            for waiting in {id(p): p for p, _, _ in stack if p is not None}.values():
                waiting.close()

    def iter_files(self, start: Path | None = None) -> Iterator[Path]:
        """The files of :meth:`walk`, as paths inside the tree (reach them through
        :meth:`read_bytes` or :meth:`open_dir`, never by name)."""
        return (self.root / rel for rel, _ in self.walk(start))


_HELD_FOLDERS = 64
"""The most folder descriptors one :meth:`Filesystem.walk` keeps open for the subfolders
still to open from them; deeper folders are reached from the tree's root again."""


class _HeldFolder:
    """A listed folder's descriptor, open while subfolders of it wait to be opened from it."""

    __slots__ = ("fd", "waiting")

    def __init__(self, fd: int, waiting: int) -> None:
        self.fd = fd
        self.waiting = waiting

    def release(self) -> bool:
        """One subfolder was opened (or failed to): True when that was the last, and the
        descriptor is closed."""
        self.waiting -= 1
        if self.waiting:
            return False
        self.close()
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _is_link(folder: int, name: str) -> bool:
    """Whether ``name`` in the folder ``folder`` is a symlink (unfollowed)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def get_workspace(path: WorkspacePath) -> Filesystem:
    """The tree of ``path`` (created if missing), with its metadata sibling."""
    path.index_dir.mkdir(parents=True, exist_ok=True)
    return Filesystem(path.tree)


def metadata_leaf(metadata: Mapping[str, object] | None, keys: Sequence[str]) -> str:
    """The ``_meta`` leaf for ``keys`` read from the team's ``metadata``, or a clear error."""
    if metadata is None:
        raise WorkspaceConfigError(
            f"workspace_metadata_keys {list(keys)} need the team's metadata, and the team has "
            f"none yet: call Orchestrator.set_metadata(...) before the team's agents start"
        )
    missing = [k for k in keys if k not in metadata or metadata[k] in (None, "")]
    if missing:
        known = ", ".join(sorted(metadata)) or "none"
        raise WorkspaceConfigError(
            f"the team's metadata has no value for {', '.join(missing)} (its fields: {known}); "
            f"fix workspace_metadata_keys or set the metadata before the agents start"
        )
    return leaf_segment([metadata[k] for k in keys])
