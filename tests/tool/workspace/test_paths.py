"""Where a workspace is (the six cells, ``workspace_id``), and the one path rule — fuzzed."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from akgentic.core import ActorAddress, ErrorMessage
from akgentic.tool.errors import RetriableError
from akgentic.tool.workspace import (
    DeleteFile,
    Filesystem,
    Identity,
    InvalidPathError,
    PathEscapeError,
    WorkspaceConfigError,
    WorkspaceTool,
    WriteFile,
    WriteGate,
    resolve_workspace_path,
    user_segment,
    validate_workspace_id,
)
from akgentic.tool.workspace import workspace as workspace_module
from akgentic.tool.workspace.workspace import KIND_ID, KIND_META, KIND_TEAM

from ..conftest import Team
from .conftest import Tools, add_member, card_of, member_tools, tool_address

# -- workspace_id, validated when the card is constructed -----------------------------------


@pytest.mark.parametrize("good", ["notes", "a", "x" * 128, "v1.2_draft-3", "..a", ".hidden"])
def test_valid_workspace_ids(good: str) -> None:
    assert validate_workspace_id(good) == good
    assert WorkspaceTool(workspace_id=good).workspace_id == good


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("", "1 to 128 characters"),
        ("x" * 129, "1 to 128 characters"),
        ("a/b", "1 to 128 characters"),
        ("../up", "1 to 128 characters"),
        ("with space", "1 to 128 characters"),
        ("é", "1 to 128 characters"),
        ("_team", "reserved"),
        ("_shared", "reserved"),
        ("..", "reserved"),
        ("repo.git", "may not end in .git or .index"),
        ("notes.index", "may not end in .git or .index"),
    ],
)
def test_invalid_workspace_ids_are_refused_at_construction(bad: str, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        WorkspaceTool(workspace_id=bad)


def test_a_card_names_one_kind_and_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="not both"):
        WorkspaceTool(workspace_id="notes", workspace_metadata_keys=["customer_id"])
    with pytest.raises(ValidationError, match="field names"):
        WorkspaceTool(workspace_metadata_keys=["not a name"])
    with pytest.raises(ValidationError, match="workspace_exex"):
        WorkspaceTool(workspace_exex=True)  # type: ignore[call-arg]


# -- the six cells -----------------------------------------------------------------------------


def test_private_cells_are_under_the_principal(tmp_path: Path) -> None:
    for kind, leaf in ((KIND_TEAM, "t-1"), (KIND_ID, "notes"), (KIND_META, "acme+42")):
        path = resolve_workspace_path(kind=kind, leaf=leaf, root=tmp_path)
        assert path.name == f"alice/{kind}/{leaf}"
        assert path.tree == tmp_path.resolve() / "alice" / kind / leaf
        assert path.index_dir.name == f"{leaf}.index" and path.git_dir.name == f"{leaf}.git"
        assert path.actor_name == f"#Workspace-alice/{kind}/{leaf}"


def test_shared_cells_need_the_platforms_permission_per_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(WorkspaceConfigError, match="does not permit sharing the 'id' kind"):
        resolve_workspace_path(kind=KIND_ID, leaf="notes", sharable=True, root=tmp_path)
    monkeypatch.setenv("AKGENTIC_WORKSPACE_SHARED_KINDS", "id, _meta")
    for kind in (KIND_ID, KIND_META):
        shared = resolve_workspace_path(kind=kind, leaf="x", sharable=True, root=tmp_path)
        assert shared.name == f"_shared/{kind}/x"
    with pytest.raises(WorkspaceConfigError, match="permits: id, meta"):
        resolve_workspace_path(kind=KIND_TEAM, leaf="t", sharable=True, root=tmp_path)


@pytest.mark.parametrize(
    ("principal", "segment"),
    [("alice", "alice"), ("Bob Smith", "Bob-Smith"), ("_shared", "shared"), ("../..", "anonymous")],
)
def test_the_principal_becomes_a_safe_segment_never_a_reserved_one(
    principal: str, segment: str
) -> None:
    assert user_segment(principal) == segment


def test_the_card_binds_one_actor_per_tree(team: Team) -> None:
    first = add_member(team, "@A", WorkspaceTool())
    second = add_member(team, "@B", WorkspaceTool())
    named = add_member(team, "@C", WorkspaceTool(workspace_id="notes"))
    team_tree = card_of(team, first).workspace
    assert team_tree.name == f"alice/_team/{team.orchestrator.team_id}"
    assert card_of(team, second)._actor == card_of(team, first)._actor
    assert card_of(team, first)._actor == tool_address(team, team_tree.actor_name)
    assert card_of(team, named).workspace.name == "alice/_id/notes"
    assert tool_address(team, "#Workspace-alice/_id/notes") != card_of(team, first)._actor
    assert team_tree.tree.is_dir() and team_tree.index_dir.is_dir()


class Case(BaseModel):
    customer_id: str
    case_id: int


def test_a_metadata_keyed_tree_reads_the_teams_metadata(team: Team) -> None:
    team.proxy.set_metadata(Case(customer_id="acme", case_id=42))
    member = add_member(
        team, "@A", WorkspaceTool(workspace_metadata_keys=["customer_id", "case_id"])
    )
    assert card_of(team, member).workspace.name == "alice/_meta/acme+42"


def errors_of(team: Team, count: int = 1) -> list[str]:
    team.recorder.wait_for(
        lambda: sum(isinstance(m, ErrorMessage) for m in team.recorder.log) >= count
    )
    return [str(m.content) for m in team.recorder.log if isinstance(m, ErrorMessage)]


def test_a_shared_tree_the_platform_does_not_permit_fails_the_bind(team: Team) -> None:
    add_member(team, "@A", WorkspaceTool(workspace_id="notes", workspace_sharable=True))
    [error] = errors_of(team)
    assert "does not permit sharing the 'id' kind" in error


def test_metadata_keys_the_team_cannot_fill_fail_the_bind(team: Team) -> None:
    add_member(team, "@A", WorkspaceTool(workspace_metadata_keys=["customer_id"]))
    [error] = errors_of(team)
    assert "call Orchestrator.set_metadata(...) before the team's agents start" in error


# -- the path rule, fuzzed: zero escapes -------------------------------------------------------


@pytest.fixture
def hostile_tree(tmp_path: Path) -> tuple[Filesystem, Path, WriteGate]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    workspace = resolve_workspace_path(kind=KIND_ID, leaf="fuzz", root=tmp_path / "ws")
    gate = WriteGate(workspace)
    root = gate.fs.root
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_text("inner")
    os.symlink(outside, root / "link_out")
    os.symlink(root / "sub", root / "link_in")
    os.symlink("../../../../outside", root / "rel_out")
    os.symlink("/nonexistent/place", root / "dangling")
    os.symlink(outside / "secret.txt", root / "sub" / "file_out")
    return gate.fs, outside, gate


SEGMENTS = st.one_of(
    st.sampled_from(
        [
            "..",
            ".",
            "",
            "link_out",
            "link_in",
            "rel_out",
            "dangling",
            "sub",
            "file_out",
            "~",
            "~root",
            "\\..\\..",
            "..\\",
            "%2e%2e",
            "...",
            " ..",
            ".. ",
            "\x00",
            "a\x00b",
            "\ud800",
            "é",
            "日本",
            "x" * 300,
            "secret.txt",
            "outside",
            "C:",
            "C:\\Windows",
        ]
    ),
    st.text(min_size=1, max_size=12),
)
HOSTILE = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "/", "//", "./", "~/", "../"]),
    st.lists(SEGMENTS, min_size=1, max_size=6),
)
ME = Identity(name="@Fuzzer", team="t")


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=HOSTILE)
def test_no_hostile_path_resolves_or_writes_outside_the_tree(
    hostile_tree: tuple[Filesystem, Path, WriteGate], path: str
) -> None:
    fs, outside, gate = hostile_tree
    try:
        resolved = fs.resolve(path)
    except (PathEscapeError, InvalidPathError):
        resolved = None
    if resolved is not None:
        assert resolved == fs.root or resolved.is_relative_to(fs.root), (path, resolved)
    with contextlib.suppress(PathEscapeError, InvalidPathError, RetriableError, OSError):
        gate.mutate(ME, WriteFile(path=path, content="written"))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], path
    assert (outside / "secret.txt").read_text() == "secret"
    assert not (fs.root.parent / "written").exists()


def test_the_named_escapes_are_refused_with_the_error_tables_message(
    hostile_tree: tuple[Filesystem, Path, WriteGate],
) -> None:
    fs, _, _ = hostile_tree
    for path in (
        "../x",
        "/etc/passwd",
        "sub/../../x",
        "link_out/secret.txt",
        "rel_out",
        "dangling",
        "sub/file_out",
        "~/x",
    ):
        with pytest.raises(PathEscapeError):
            fs.resolve(path)
    for path in ("a\x00b", "\ud800", "x" * 300, "d/" * 2100, ".akgentic-staging-x"):
        with pytest.raises(InvalidPathError):
            fs.resolve(path)
    assert fs.resolve("link_in/inner.txt") == fs.root / "sub" / "inner.txt"
    assert fs.resolve("sub/../sub/./inner.txt") == fs.root / "sub" / "inner.txt"
    assert fs.resolve("") == fs.root == fs.resolve(".")


def test_deleting_any_link_removes_the_link_only(
    hostile_tree: tuple[Filesystem, Path, WriteGate],
) -> None:
    """A link is deleted where it is, never followed: out of the tree, to a folder inside
    it, or to nothing at all — what it points to is left as it is."""
    fs, outside, gate = hostile_tree
    for path in ("link_out", "link_in", "rel_out", "dangling", "sub/file_out"):
        outcome = gate.mutate(ME, DeleteFile(path=path, recursive=True))
        assert outcome.summary.startswith(f"Deleted the symlink {path} (it pointed to "), path
        assert not os.path.lexists(fs.root / path), path
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret"
    assert (fs.root / "sub" / "inner.txt").read_text() == "inner"


def test_the_walk_names_files_as_the_agent_does_and_never_follows_a_link(
    hostile_tree: tuple[Filesystem, Path, WriteGate],
) -> None:
    """The one walk (search, grep, a folder's delete, exec's snapshot) yields the tree's
    regular files only, each named as :meth:`Filesystem.relative` names it, in name order
    within a folder; symlinks (to a file or a folder, in the tree or out) and staging files
    are left out, from the root or from a folder inside."""
    fs, _, _ = hostile_tree
    (fs.root / "b.txt").write_text("b")
    (fs.root / "sub" / "deep").mkdir()
    (fs.root / "sub" / "deep" / "a.md").write_text("a")
    (fs.root / "sub" / ".akgentic-staging-x").write_text("half")
    walked = list(fs.walk())
    assert [rel for rel, _ in walked] == ["b.txt", "sub/inner.txt", "sub/deep/a.md"]
    sizes = [entry.stat(follow_symlinks=False).st_size for _, entry in fs.walk()]
    assert sizes == [1, 5, 1]  # each taken before the walk moves on, as its contract says
    assert [rel for rel, _ in fs.walk(fs.root / "sub")] == ["sub/inner.txt", "sub/deep/a.md"]
    assert list(fs.iter_files(fs.root / "sub")) == [
        fs.root / "sub" / "inner.txt",
        fs.root / "sub" / "deep" / "a.md",
    ]


# -- a folder swapped for a symlink between the path rule and the open ----------------------------

Call = Callable[[Tools], object]
"""One tool call over ``d/`` (the folder the race swaps)."""

SWAP_CALLS: dict[str, Call] = {
    "read": lambda t: t["workspace_read"]("d/f.txt"),
    "write a new file": lambda t: t["workspace_write"]("d/new.txt", "PWNED\n"),
    "write over an unread file": lambda t: t["workspace_write"]("d/f.txt", "PWNED\n"),
    "edit": lambda t: t["workspace_edit"]("d/f.txt", "host-secret-42", "PWNED"),
    "patch": lambda t: t["workspace_patch"](
        "--- a/d/f.txt\n+++ b/d/f.txt\n@@ -1 +1 @@\n-host-secret-42\n+PWNED\n"
    ),
    "delete a file": lambda t: t["workspace_delete"]("d/f.txt"),
    "delete a folder": lambda t: t["workspace_delete"]("d/sub", recursive=True),
    "mkdir": lambda t: t["workspace_mkdir"]("d/made"),
    "grep": lambda t: t["workspace_grep"]("secret|inside", "d/f.txt"),
    "search": lambda t: t["workspace_search"]("host secret"),
    "list": lambda t: t["workspace_list"]("d"),
}


@pytest.mark.parametrize("call", SWAP_CALLS.values(), ids=SWAP_CALLS.keys())
def test_a_folder_swapped_for_a_symlink_after_the_path_rule_is_never_followed_out(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    """A command in the sandbox can rename a folder of the tree and put a symlink to
    anywhere on the host in its place, in a loop, while a tool works on a path under it:
    the path rule saw a folder, and a path opened by name afterwards would follow the
    link out of the tree. Here the swap happens deterministically right after the rule
    resolved the path (every check of the rule sees the folder: the swap is undone before
    it); nothing outside is read, written, listed or removed."""
    tools = member_tools(team, "@Dev")
    tools["workspace_write"]("d/f.txt", "inside\n")
    tools["workspace_write"]("d/sub/x.txt", "inside\n")
    tree = card_of(team, _member(team, "@Dev")).workspace.tree
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "f.txt").write_text("host-secret-42\n")
    (outside / "sub" / "x.txt").write_text("host-secret-42\n")
    (outside / "host-only.txt").write_text("host-secret-42\n")
    before = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    resolve = Filesystem.resolve

    def racing(fs: Filesystem, path: str) -> Path:
        if threading.current_thread().name.startswith("IndexWorker"):
            return resolve(fs, path)  # the indexing workers run beside the call: left alone
        folder = tree / "d"
        if folder.is_symlink():  # every check of the rule sees the folder...
            folder.unlink()
            os.rename(tree / "d.moved", folder)
        real = resolve(fs, path)
        if path.startswith("d"):  # ...and the link is there right after it
            os.rename(folder, tree / "d.moved")
            os.symlink(outside, folder)
        return real

    monkeypatch.setattr(Filesystem, "resolve", racing)
    try:
        answer = str(call(tools))
    except RetriableError as exc:
        answer = str(exc)
        assert answer.startswith("Path escapes workspace root"), answer
    assert "host-secret" not in answer and "host-only" not in answer
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == before
    for host in ("f.txt", "sub/x.txt", "host-only.txt"):
        assert (outside / host).read_text() == "host-secret-42\n"


def _member(team: Team, name: str) -> ActorAddress:
    [member] = [m for m in team.proxy.get_team() if m.name == name]
    return member


# -- a folder swapped for a symlink while the walk goes -------------------------------------------


class _Listed:
    """What ``os.scandir`` answered, already read (so the swap can follow the listing)."""

    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self.entries = entries

    def __enter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)

    def __exit__(self, *_: object) -> None:
        return None


def _swap_after_first_listing(
    monkeypatch: pytest.MonkeyPatch, tree: Path, outside: Path, *, restore: bool = False
) -> list[int]:
    """Make the first ``os.scandir`` of this thread (the walk's listing of the tree's root)
    swap ``tree/d`` for a symlink to ``outside`` once it has listed ``d`` as a folder — and,
    with ``restore``, a listing of the host folder through the link put the folder back
    once it has listed (so a check made after it sees the folder); the swaps done, to check
    the race was run."""
    original = os.scandir
    me = threading.current_thread()
    swaps: list[int] = []

    def swapping(target: Any) -> _Listed:
        with original(target) as scan:
            entries = list(scan)
        if threading.current_thread() is not me:
            return _Listed(entries)
        if not swaps:
            os.rename(tree / "d", tree / "d.moved")
            os.symlink(outside, tree / "d")
            swaps.append(1)
        elif restore and len(swaps) == 1 and any(e.name.startswith("host") for e in entries):
            os.unlink(tree / "d")
            os.rename(tree / "d.moved", tree / "d")
            swaps.append(2)
        return _Listed(entries)

    monkeypatch.setattr(os, "scandir", swapping)
    return swaps


def _host(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "host-folder").mkdir(parents=True)
    (outside / "host-only-name.txt").write_text("host\n")
    (outside / "host-folder" / "host-inner-name.txt").write_text("host\n")
    return outside


def test_the_walk_never_lists_a_host_folder_swapped_in_while_it_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk listed folders by path: a command swapping a folder of the tree for a
    symlink to the host between the walk's listing of its parent and of the folder made it
    list the host folder, and the host's file names reached search's records, grep's
    file list and a command's "files changed". Each folder is now reached by the read
    path's descriptor walk, so the swapped folder is left out, and the rest is walked."""
    outside = _host(tmp_path)
    fs = Filesystem(tmp_path / "tree")
    for rel in ("a.txt", "d/f.txt", "d/sub/x.txt", "z/y.txt"):
        (fs.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (fs.root / rel).write_text("inside\n")
    swaps = _swap_after_first_listing(monkeypatch, fs.root, outside)
    walked = [rel for rel, _ in fs.walk()]
    assert swaps == [1]
    assert walked == ["a.txt", "z/y.txt"]
    monkeypatch.undo()
    assert [rel for rel, _ in fs.walk()] == [
        "a.txt",
        "d.moved/f.txt",
        "d.moved/sub/x.txt",
        "z/y.txt",
    ]


def test_a_grep_during_the_swap_matches_the_tree_and_names_no_host_file(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """grep walks the tree with the one walk: a folder swapped for a link to the host
    while it walks is left out of the files it matches (in its worker process, as ever),
    the others are matched."""
    tools = member_tools(team, "@Dev")
    for rel in ("a.txt", "d/f.txt", "z/y.txt"):
        tools["workspace_write"](rel, f"needle in {rel}\n")
    tree = card_of(team, _member(team, "@Dev")).workspace.tree
    outside = _host(tmp_path)
    swaps = _swap_after_first_listing(monkeypatch, tree, outside)
    answer = tools["workspace_grep"]("needle|host")
    assert swaps == [1]
    assert answer == "a.txt:1: needle in a.txt\nz/y.txt:1: needle in z/y.txt"


def test_a_deep_walk_holds_a_bounded_number_of_descriptors_and_closes_them_when_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk keeps a listed folder open while its subfolders wait to be opened from it:
    past its bound, a folder is reached from the root again, the same files in the same
    order; a walk stopped part way closes every folder it kept."""
    fs = Filesystem(tmp_path / "tree")
    for rel in ("a/b/c/d/one.txt", "a/b/c/e/two.txt", "a/b/f/three.txt", "a/g/h/four.txt"):
        (fs.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (fs.root / rel).write_text("x")
    whole = [rel for rel, _ in fs.walk()]
    assert whole == ["a/b/c/d/one.txt", "a/b/c/e/two.txt", "a/b/f/three.txt", "a/g/h/four.txt"]
    held = _descriptors_of_this_thread(monkeypatch)
    monkeypatch.setattr(workspace_module, "_HELD_FOLDERS", 1)
    walk = fs.walk()
    assert next(walk)[0] == "a/b/c/d/one.txt"
    assert len(held) == 2  # the one kept (a/), the one listed (a/b/c/d/)
    assert [rel for rel, _ in walk] == whole[1:]
    assert held == set()
    monkeypatch.setattr(workspace_module, "_HELD_FOLDERS", 64)
    stopped = fs.walk()
    next(stopped)
    assert len(held) == 4  # a/, a/b/, a/b/c/ kept (each has a subfolder to open); a/b/c/d/
    stopped.close()
    assert held == set()


def _descriptors_of_this_thread(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The descriptors ``os.open`` gives this thread from now on and ``os.close`` has not
    closed (other threads' opens are not counted)."""
    me = threading.current_thread()
    held: set[int] = set()
    opening, closing = os.open, os.close

    def counted_open(*args: Any, **kwargs: Any) -> int:
        fd = opening(*args, **kwargs)
        if threading.current_thread() is me:
            held.add(fd)
        return fd

    def counted_close(fd: int) -> None:
        held.discard(fd)
        closing(fd)

    monkeypatch.setattr(os, "open", counted_open)
    monkeypatch.setattr(os, "close", counted_close)
    return held


def test_a_glob_during_the_swap_names_no_host_file(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pathlib's glob listed folders by path: a folder swapped for a link to the host while
    it listed, and put back before the answer's paths were checked, put the host's file
    names in the answer. The glob scans the tree as the walk does: the swapped folder is
    left out, the rest is found."""
    tools = member_tools(team, "@Dev")
    for rel in ("a.txt", "d/f.txt", "z/y.txt"):
        tools["workspace_write"](rel, "x\n")
    tree = card_of(team, _member(team, "@Dev")).workspace.tree
    outside = _host(tmp_path)
    swaps = _swap_after_first_listing(monkeypatch, tree, outside, restore=True)
    answer = tools["workspace_glob"]("*/*")
    assert answer == "z/y.txt"
    assert swaps == [1]  # the host folder was never listed: nothing to put back
