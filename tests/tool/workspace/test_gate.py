"""The write gate, exactly as the seed states it — directly, and through the card."""

from __future__ import annotations

import inspect
import os
import stat
import subprocess
from pathlib import Path

import pytest

from akgentic.tool.errors import RetriableError
from akgentic.tool.workspace import (
    DeleteFile,
    EditFile,
    EditItem,
    Filesystem,
    GateRefusalError,
    Identity,
    MakeDir,
    PatchFiles,
    WorkspaceTool,
    WriteEntry,
    WriteFile,
    WriteGate,
    is_staging_name,
    resolve_workspace_path,
)
from akgentic.tool.workspace.workspace import KIND_ID
from tests.hostile_yaml import alias_bomb

from ..conftest import Team
from .conftest import member_tools

ALICE = Identity(name="@Alice", team="t1")
BOB = Identity(name="@Bob", team="t1")


@pytest.fixture
def gate(tmp_path: Path) -> WriteGate:
    return WriteGate(resolve_workspace_path(kind=KIND_ID, leaf="gate", root=tmp_path))


def edit(path: str, old: str, new: str) -> EditFile:
    return EditFile(path=path, edits=[EditItem(old_string=old, new_string=new)])


def test_a_lost_update_is_refused_with_the_diff_of_what_it_would_destroy(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="notes.md", content="# Notes\nfirst line\n"))
    gate.read(BOB, "notes.md")  # Bob reads version 1
    gate.mutate(ALICE, edit("notes.md", "first line", "first line\nALICE'S WORK"))
    with pytest.raises(GateRefusalError) as refused:
        gate.mutate(BOB, WriteFile(path="notes.md", content="# Notes\nbob's version\n"))
    message = str(refused.value)
    assert message.startswith("Refused: notes.md has changed since you last read it")
    assert "changed by @Alice (edit," in message
    assert "Nothing was written." in message
    assert "-ALICE'S WORK" in message and "+bob's version" in message  # what it would destroy
    assert "Read notes.md again with workspace_read" in message
    assert (gate.fs.root / "notes.md").read_text() == "# Notes\nfirst line\nALICE'S WORK\n"


def test_after_reading_again_the_same_change_goes_through(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="v1\n"))
    gate.read(BOB, "a.txt")
    gate.mutate(ALICE, WriteFile(path="a.txt", content="v2\n"))
    with pytest.raises(GateRefusalError):
        gate.mutate(BOB, edit("a.txt", "v2", "v3"))
    gate.read(BOB, "a.txt")
    assert gate.mutate(BOB, edit("a.txt", "v2", "v3")).changes[0].action == "modified"


def test_a_write_over_an_unread_existing_file_is_refused(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="alice\n"))
    with pytest.raises(
        GateRefusalError, match="already exists and you have not read it"
    ) as refused:
        gate.mutate(BOB, WriteFile(path="a.txt", content="bob\n"))
    assert "-alice" in str(refused.value) and "+bob" in str(refused.value)
    assert (gate.fs.root / "a.txt").read_text() == "alice\n"


def test_an_author_may_change_what_it_wrote_without_reading_it(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    gate.mutate(ALICE, WriteFile(path="a.txt", content="two\n"))  # its write is its view
    gate.mutate(ALICE, edit("a.txt", "two", "three"))
    assert (gate.fs.root / "a.txt").read_text() == "three\n"


def test_edits_patches_and_deletes_of_unread_files_need_no_read(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\ntwo\n"))
    gate.mutate(BOB, edit("a.txt", "one", "ONE"))  # anchored on the text it replaces
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n ONE\n-two\n+TWO\n"
    gate.mutate(Identity(name="@Carol"), PatchFiles(patch=patch))
    assert (gate.fs.root / "a.txt").read_text() == "ONE\nTWO\n"
    gate.mutate(Identity(name="@Dave"), DeleteFile(path="a.txt"))  # a delete replaces nothing
    assert not (gate.fs.root / "a.txt").exists()


def test_a_delete_of_a_file_changed_since_read_is_refused(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    gate.read(BOB, "a.txt")
    gate.mutate(ALICE, WriteFile(path="a.txt", content="two\n"))
    with pytest.raises(GateRefusalError, match="has changed since you last read it"):
        gate.mutate(BOB, DeleteFile(path="a.txt"))
    assert (gate.fs.root / "a.txt").exists()


def test_a_file_deleted_since_read_is_not_silently_recreated(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    gate.read(BOB, "a.txt")
    gate.mutate(ALICE, DeleteFile(path="a.txt"))
    with pytest.raises(
        GateRefusalError, match="was deleted since you last read it — deleted by @Alice"
    ):
        gate.mutate(BOB, WriteFile(path="a.txt", content="bob\n"))
    assert not (gate.fs.root / "a.txt").exists()


def test_a_change_made_outside_the_tools_is_named_as_such(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    (gate.fs.root / "a.txt").write_text("edited by hand\n")
    with pytest.raises(GateRefusalError, match="outside the workspace tools"):
        gate.mutate(ALICE, WriteFile(path="a.txt", content="two\n"))


def test_an_edit_that_no_longer_applies_is_refused_by_the_gate_first(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="alpha\n"))
    gate.read(BOB, "a.txt")
    gate.mutate(ALICE, WriteFile(path="a.txt", content="beta\n"))
    with pytest.raises(GateRefusalError) as refused:
        gate.mutate(BOB, edit("a.txt", "alpha", "gamma"))
    assert "does not even apply to what it holds now" in str(refused.value)
    assert "+beta" in str(refused.value)


def test_what_an_agent_read_is_kept_on_the_tree_not_in_memory(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    gate.read(BOB, "a.txt")
    other = WriteGate(gate.workspace)  # another actor, another process: nothing handed over
    other.mutate(BOB, WriteFile(path="a.txt", content="bob\n"))
    assert (gate.fs.root / "a.txt").read_text() == "bob\n"
    views = sorted(p.name for p in (gate.workspace.index_dir / "views").iterdir())
    assert views == ["t1--Alice.yaml", "t1--Bob.yaml"]


def test_a_directory_delete_needs_recursive_and_checks_every_file_read(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="d/x.txt", content="x\n"))
    gate.mutate(ALICE, WriteFile(path="d/e/y.txt", content="y\n"))
    directory = "d is a directory with 2 files in it; delete it with recursive=true"
    with pytest.raises(RetriableError, match=directory):
        gate.mutate(BOB, DeleteFile(path="d"))
    gate.read(BOB, "d/e/y.txt")
    gate.mutate(ALICE, WriteFile(path="d/e/y.txt", content="y2\n"))
    with pytest.raises(GateRefusalError, match="d/e/y.txt has changed"):
        gate.mutate(BOB, DeleteFile(path="d", recursive=True))
    outcome = gate.mutate(ALICE, DeleteFile(path="d", recursive=True))
    assert {c.path for c in outcome.changes} == {"d", "d/x.txt", "d/e/y.txt"}
    assert not (gate.fs.root / "d").exists()


def test_mkdir_and_the_tree_itself(gate: WriteGate) -> None:
    assert gate.mutate(ALICE, MakeDir(path="a/b")).summary == "Created directory a/b/."
    assert gate.mutate(ALICE, MakeDir(path="a/b")).summary == "a/b/ already exists."
    with pytest.raises(RetriableError, match="the workspace itself"):
        gate.mutate(ALICE, WriteFile(path=".", content="x"))


def test_writes_are_atomic_and_leave_no_staging_file(gate: WriteGate) -> None:
    fs = gate.fs
    (fs.root / "keep.txt").write_text("old\n")
    os.chmod(fs.root / "keep.txt", 0o640)
    fs.write(fs.root / "keep.txt", b"new\n")
    assert (fs.root / "keep.txt").read_text() == "new\n"
    assert oct((fs.root / "keep.txt").stat().st_mode & 0o777) == "0o640"  # mode kept
    # A batch that fails while staging changes nothing and leaves nothing behind.
    (fs.root / "blocker").mkdir()
    entries = [WriteEntry(fs.root / "keep.txt", b"batch\n"), WriteEntry(fs.root / "blocker", b"x")]
    with pytest.raises(IsADirectoryError):
        fs.write_many(entries)
    assert (fs.root / "keep.txt").read_text() == "new\n"
    assert not [p for p in fs.root.rglob("*") if is_staging_name(p.name)]


def test_the_tools_have_no_bypass_argument(team: Team) -> None:
    tools = member_tools(team, "@Any", WorkspaceTool(workspace_exec=True))
    assert len(tools) == 14
    names = {p for fn in tools.values() for p in inspect.signature(fn).parameters}
    assert not names & {"force", "digest", "expected", "expected_sha", "overwrite", "bypass"}


def test_the_gate_through_the_card_two_agents_one_tree(team: Team) -> None:
    alice = member_tools(team, "@Alice")
    bob = member_tools(team, "@Bob")
    alice["workspace_write"]("plan.md", "# Plan\n- step one\n")
    assert "plan.md (lines 1-2 of 2)" in bob["workspace_read"]("plan.md")
    alice["workspace_edit"]("plan.md", "- step one", "- step one\n- step two")
    with pytest.raises(
        RetriableError, match="plan.md has changed since you last read it"
    ) as refused:
        bob["workspace_write"]("plan.md", "# Plan\n- bob's only step\n")
    assert "-- step two" in str(refused.value)
    bob["workspace_read"]("plan.md")
    assert "modified plan.md" in bob["workspace_edit"](
        "plan.md", "- step two", "- step two\n- step three"
    )
    assert (
        Filesystem(Path(team_tree(team))).resolve("plan.md").read_text().endswith("- step three\n")
    )


def test_what_the_gate_holds_for_deletes_as_the_readme_says_it(team: Team) -> None:
    """The README's headline and gate section, end to end: an agent may delete another
    agent's file it never read (seed 004: a delete replaces nothing), the journal keeps
    the deleted version, and a delete of a file changed since the agent read it is
    refused, naming who changed it."""
    alice = member_tools(team, "@Alice", WorkspaceTool(git_journal=True))
    bob = member_tools(team, "@Bob", WorkspaceTool(git_journal=True))
    alice["workspace_write"]("a.txt", "alice's work\n")
    assert "a.txt" in bob["workspace_delete"]("a.txt")  # unread, another agent's: allowed
    tree = Path(team_tree(team))
    assert not (tree / "a.txt").exists()
    git_dir = tree.with_name(tree.name + ".git")
    kept = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", "HEAD~1:a.txt"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert kept.stdout == "alice's work\n"
    last = subprocess.run(
        ["git", f"--git-dir={git_dir}", "log", "-1", "--format=%an %s"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert last.stdout.strip() == "@Bob delete a.txt"

    alice["workspace_write"]("b.txt", "one\n")
    bob["workspace_read"]("b.txt")
    alice["workspace_edit"]("b.txt", "one", "two")
    with pytest.raises(RetriableError, match="b.txt has changed since you last read it") as no:
        bob["workspace_delete"]("b.txt")
    assert "changed by @Alice (edit," in str(no.value)
    assert (tree / "b.txt").read_text() == "two\n"
    readme = (Path(__file__).parents[3] / "src/akgentic/tool/workspace/README.md").read_text()
    assert "cannot corrupt" not in readme  # the headline claims only what this test holds
    assert "though it may delete one" in readme


def team_tree(team: Team) -> str:
    root = Path(os.environ["AKGENTIC_WORKSPACES_ROOT"])
    return str(root / "alice" / "_team" / str(team.orchestrator.team_id))


def test_read_only_cards_have_no_write_tools(team: Team) -> None:
    tools = member_tools(team, "@Reader", WorkspaceTool(read_only=True, workspace_exec=True))
    assert sorted(tools) == [
        "workspace_glob",
        "workspace_grep",
        "workspace_list",
        "workspace_read",
        "workspace_search",
        "workspace_view",
    ]
    narrow = member_tools(
        team, "@Narrow", WorkspaceTool(read_only=True, workspace_glob=False, workspace_search=False)
    )
    assert sorted(narrow) == [
        "workspace_grep",
        "workspace_list",
        "workspace_read",
        "workspace_view",
    ]


def test_an_index_record_of_aliases_in_aliases_reads_as_no_record(gate: WriteGate) -> None:
    """The index sits in the tree the model's commands write too: a views file that
    expands to millions of values is ignored (nothing read), not walked for minutes."""
    gate.mutate(ALICE, WriteFile(path="a.txt", content="one\n"))
    gate.read(BOB, "a.txt")
    views = gate.workspace.index_dir / "views" / "t1--Bob.yaml"
    assert gate.records.load_views(BOB) != {}
    views.write_text(alias_bomb() + "files: {a.txt: {sha: '0', at: 1.0}}\n")
    assert gate.records.load_views(BOB) == {}


# -- what a path names when it is not a regular file ----------------------------------------------


def test_deleting_a_symlink_removes_the_link_and_never_its_target(gate: WriteGate) -> None:
    """It deleted the link's target, left a dangling link, and said "deleted a.txt"."""
    gate.mutate(ALICE, WriteFile(path="b.txt", content="keep me\n"))
    os.symlink("b.txt", gate.fs.root / "a.txt")
    outcome = gate.mutate(ALICE, DeleteFile(path="a.txt"))
    assert (
        outcome.summary
        == "Deleted the symlink a.txt (it pointed to 'b.txt', which is left as it is)."
    )
    assert [(c.path, c.action) for c in outcome.changes] == [("a.txt", "deleted")]
    assert not os.path.lexists(gate.fs.root / "a.txt")
    assert (gate.fs.root / "b.txt").read_text() == "keep me\n"


def test_deleting_a_symlink_to_a_folder_leaves_the_folder_whole(gate: WriteGate) -> None:
    gate.mutate(ALICE, WriteFile(path="sub/inner.txt", content="inner\n"))
    os.symlink("sub", gate.fs.root / "link")
    outcome = gate.mutate(ALICE, DeleteFile(path="link", recursive=True))
    assert outcome.summary.startswith("Deleted the symlink link (it pointed to 'sub'")
    assert not os.path.lexists(gate.fs.root / "link")
    assert (gate.fs.root / "sub" / "inner.txt").read_text() == "inner\n"


def test_a_write_through_a_link_in_the_tree_changes_its_target_and_says_so(
    gate: WriteGate,
) -> None:
    """A write follows a link inside the tree (as an editor does) and names the file it
    changed; the link stays a link. A link out of the tree is refused (the path rule)."""
    gate.mutate(ALICE, WriteFile(path="b.txt", content="one\n"))
    os.symlink("b.txt", gate.fs.root / "a.txt")
    outcome = gate.mutate(ALICE, WriteFile(path="a.txt", content="two\n"))
    assert outcome.summary == "Wrote: modified b.txt (+1 -1 lines)."
    assert os.readlink(gate.fs.root / "a.txt") == "b.txt"
    assert (gate.fs.root / "b.txt").read_text() == "two\n"


def test_a_fifo_is_not_a_file_to_edit_or_replace_but_may_be_deleted(gate: WriteGate) -> None:
    """An edit said "File not found"; a write silently replaced the pipe with a file."""
    fifo = gate.fs.root / "pipe"
    os.mkfifo(fifo)
    not_a_file = (
        "'pipe' is not a regular file (a pipe, socket or device): only regular files can be "
        "read or changed"
    )
    for mutation in (
        edit("pipe", "a", "b"),
        WriteFile(path="pipe", content="text\n"),
        PatchFiles(patch="--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n"),
    ):
        with pytest.raises(RetriableError) as refused:
            gate.mutate(ALICE, mutation)
        assert str(refused.value) == not_a_file
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(RetriableError, match="^'pipe' is not a regular file"):
        gate.read(ALICE, "pipe")
    outcome = gate.mutate(ALICE, DeleteFile(path="pipe"))
    assert outcome.summary == "Deleted pipe (a pipe, not a regular file)."
    assert not os.path.lexists(fifo)
