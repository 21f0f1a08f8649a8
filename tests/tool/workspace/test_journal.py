"""The git journal: one commit per accepted mutation, authored by the agent; out-of-band
changes belong to nobody; without git it is off, said once."""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
from pathlib import Path

import pytest

from akgentic.tool.workspace import (
    DeleteFile,
    GateRefusalError,
    GitJournal,
    Identity,
    MakeDir,
    WorkspaceTool,
    WriteFile,
    WriteGate,
)
from akgentic.tool.workspace import journal as journal_module
from akgentic.tool.workspace.gate import EXEC_LEASE, lock_file
from akgentic.tool.workspace.models import MAX_CHANGE_BYTES
from akgentic.tool.workspace.workspace import KIND_ID, WorkspacePath, resolve_workspace_path

from ..conftest import Team
from .conftest import add_member, card_of, tools_of

ALICE = Identity(name="@Alice", team="0f1e2d3c-team")
BOB = Identity(name="@Bob", team="0f1e2d3c-team")


@pytest.fixture
def workspace(tmp_path: Path) -> WorkspacePath:
    return resolve_workspace_path(kind=KIND_ID, leaf="journal", root=tmp_path)


def journal_of(workspace: WorkspacePath) -> GitJournal:
    return GitJournal(workspace.tree, workspace.git_dir)


def history(workspace: WorkspacePath, *args: str) -> str:
    """What git says of the journal's history (``args``: a git command and its options)."""
    done = subprocess.run(
        ["git", f"--git-dir={workspace.git_dir}", *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def log(workspace: WorkspacePath) -> list[tuple[str, str, str]]:
    return [(e.author, e.email, e.message) for e in reversed(journal_of(workspace).log())]


def test_accepted_mutations_are_commits_authored_by_their_agent(workspace: WorkspacePath) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    gate.read(BOB, "a.md")
    gate.mutate(BOB, WriteFile(path="a.md", content="two\n"), journal)
    gate.mutate(ALICE, WriteFile(path="b.md", content="b\n"), journal)
    assert log(workspace) == [
        ("nobody", "nobody@local.akgentic.invalid", "journal: seeded .gitignore"),
        ("@Alice", "alice@0f1e2d3c.akgentic.invalid", "write a.md"),
        ("@Bob", "bob@0f1e2d3c.akgentic.invalid", "write a.md"),
        ("@Alice", "alice@0f1e2d3c.akgentic.invalid", "write b.md"),
    ]
    assert not (workspace.tree / ".git").exists()  # the history lives beside the tree
    assert (workspace.git_dir / "HEAD").is_file()


def test_a_refused_mutation_commits_nothing(workspace: WorkspacePath) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    with pytest.raises(GateRefusalError):
        gate.mutate(BOB, WriteFile(path="a.md", content="mine\n"), journal)
    assert [m for _, _, m in log(workspace)] == ["journal: seeded .gitignore", "write a.md"]


def test_out_of_band_changes_are_committed_as_nobody_before_the_next_commit(
    workspace: WorkspacePath,
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    (workspace.tree / "by_hand.txt").write_text("nobody asked\n")
    gate.mutate(BOB, WriteFile(path="c.md", content="c\n"), journal)
    entries = log(workspace)
    assert entries[-2][0::2] == ("nobody", "out-of-band changes")
    assert entries[-1][0::2] == ("@Bob", "write c.md")
    show = history(workspace, "show", "--name-only", "--format=", "HEAD~1")
    assert show.split() == ["by_hand.txt"]  # not swept into @Bob's commit


def test_the_seeded_gitignore_keeps_staging_files_and_caches_out(workspace: WorkspacePath) -> None:
    journal = journal_of(workspace)
    assert journal.ensure()
    ignore = (workspace.tree / ".gitignore").read_text()
    assert ".akgentic-staging-*" in ignore and "__pycache__/" in ignore


def test_without_git_the_journal_is_off_said_once_and_the_gate_still_holds(
    workspace: WorkspacePath, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(journal_module, "_absence_logged", False)
    journal = journal_of(workspace)
    journal.git = None  # as on a machine without git
    gate = WriteGate(workspace)
    with caplog.at_level(logging.WARNING, logger="akgentic.tool.workspace"):
        assert gate.mutate(ALICE, WriteFile(path="a.md", content="1\n"), journal).commit is None
        gate.mutate(ALICE, WriteFile(path="a.md", content="2\n"), journal)
    said = [r.getMessage() for r in caplog.records if "git is not on PATH" in r.getMessage()]
    assert said == ["git is not on PATH: the workspace journal is off"]
    with pytest.raises(GateRefusalError):
        gate.mutate(BOB, WriteFile(path="a.md", content="mine\n"), journal)
    assert not workspace.git_dir.exists()


def test_the_card_commits_through_the_actor_and_says_so(team: Team) -> None:
    member = add_member(team, "@Writer", WorkspaceTool(git_journal=True))
    tools = tools_of(team, member)
    answer = tools["workspace_write"]("README.md", "# hello\n")
    assert answer.startswith("Wrote: created README.md (1 line). (journal ")
    workspace = card_of(team, member).workspace
    assert log(workspace)[-1][0::2] == ("@Writer", "write README.md")


def test_deleting_a_symlink_is_journalled_as_its_agent(workspace: WorkspacePath) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="b.md", content="b\n"), journal)
    os.symlink("b.md", workspace.tree / "a.md")  # made by a command: out of band
    outcome = gate.mutate(BOB, DeleteFile(path="a.md"), journal)
    assert outcome.commit is not None
    assert [m for _, _, m in log(workspace)][-2:] == ["out-of-band changes", "delete a.md"]
    assert log(workspace)[-1][0] == "@Bob"
    assert (workspace.tree / "b.md").read_text() == "b\n"


# -- a command running in the tree meanwhile ---------------------------------------------------


def files_of(workspace: WorkspacePath, rev: str) -> list[str]:
    return history(workspace, "show", "--name-only", "--format=", rev).split()


def test_while_a_command_holds_the_tree_a_write_commits_its_own_paths_and_sweeps_nothing(
    workspace: WorkspacePath,
) -> None:
    """A file a running command changed is the command's: not nobody's (the sweep before a
    write waits for the run's end), and not the writing agent's."""
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    lease = os.open(lock_file(workspace.index_dir, EXEC_LEASE), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lease, fcntl.LOCK_EX)  # as a run's worker holds it
        (workspace.tree / "built.txt").write_text("the command's work\n")
        gate.mutate(BOB, WriteFile(path="c.md", content="c\n"), journal)
        assert [m for _, _, m in log(workspace)][-2:] == ["write a.md", "write c.md"]
        assert files_of(workspace, "HEAD") == ["c.md"]
        assert journal.dirty()  # built.txt waits for the run's own commit
    finally:
        os.close(lease)
    gate.mutate(ALICE, WriteFile(path="d.md", content="d\n"), journal)  # no run now
    entries = log(workspace)
    assert [(a, m) for a, _, m in entries[-2:]] == [
        ("nobody", "out-of-band changes"),
        ("@Alice", "write d.md"),
    ]
    assert files_of(workspace, "HEAD~1") == ["built.txt"]
    assert not journal.dirty()


class LateWriter(GitJournal):
    """A journal beside which something writes ``late.txt`` the moment its sweep is done:
    what a command does between the sweep and the agent's commit."""

    def commit_out_of_band(self, message: str = "out-of-band changes") -> str | None:
        done = super().commit_out_of_band(message)
        (self.tree / "late.txt").write_text("not the agent's\n")
        return done


def test_a_file_changed_after_the_sweep_is_never_in_the_agents_commit(
    workspace: WorkspacePath,
) -> None:
    gate, journal = WriteGate(workspace), LateWriter(workspace.tree, workspace.git_dir)
    outcome = gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    assert outcome.commit is not None
    assert files_of(workspace, "HEAD") == ["a.md"]
    assert log(workspace)[-1][0::2] == ("@Alice", "write a.md")
    gate.mutate(BOB, DeleteFile(path="a.md"), journal)
    entries = log(workspace)
    assert [(a, m) for a, _, m in entries[-2:]] == [
        ("nobody", "out-of-band changes"),
        ("@Bob", "delete a.md"),
    ]
    assert files_of(workspace, "HEAD~1") == ["late.txt"]
    assert files_of(workspace, "HEAD") == ["a.md"]  # the deletion, alone


def test_a_fifo_git_would_read_is_said_at_once_and_the_journal_records_again_once_it_is_gone(
    workspace: WorkspacePath, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git opens every ``.gitignore`` and ``.gitattributes`` it walks past: a FIFO there
    (a command can make one) stalled each journal step until git's timeout. It is named
    instead, before git runs."""
    monkeypatch.setattr(GitJournal, "timeout", 600.0)  # a stall would show as a hang
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    (workspace.tree / "sub").mkdir()
    os.mkfifo(workspace.tree / "sub" / ".gitignore")
    outcome = gate.mutate(ALICE, WriteFile(path="sub/b.md", content="b\n"), journal)
    assert outcome.unrecorded == (
        "sub/.gitignore is a FIFO or a device, not a file, and git would wait on it for "
        "ever: remove it, and the journal records again"
    )
    assert (workspace.tree / "sub" / "b.md").read_text() == "b\n"  # written all the same
    gate.mutate(ALICE, DeleteFile(path="sub/.gitignore"), journal)
    gate.mutate(ALICE, WriteFile(path="c.md", content="c\n"), journal)
    assert [(a, m) for a, _, m in log(workspace)[-3:]] == [
        ("@Alice", "write a.md"),
        ("nobody", "out-of-band changes"),
        ("@Alice", "write c.md"),
    ]
    assert files_of(workspace, "HEAD~1") == ["sub/b.md"]
    assert not journal.dirty()


# -- a repository inside the tree ------------------------------------------------------------


def plant_repository(gate: WriteGate, journal: GitJournal, folder: str, marker: Path) -> None:
    """What a hostile model can write with the file tools alone: a nested ``.git`` whose
    config asks git to run a program (``core.fsmonitor``), and a ``HEAD`` naming no commit."""
    config = f'[core]\n\tfsmonitor = "touch {marker}; echo"\n'
    gate.mutate(ALICE, MakeDir(path=f"{folder}/.git/objects"), journal)
    gate.mutate(ALICE, MakeDir(path=f"{folder}/.git/refs/heads"), journal)
    gate.mutate(ALICE, WriteFile(path=f"{folder}/.git/config", content=config), journal)
    gate.mutate(ALICE, WriteFile(path=f"{folder}/.git/HEAD", content="1" * 40 + "\n"), journal)


def committed_paths(workspace: WorkspacePath) -> list[str]:
    return history(workspace, "ls-tree", "-r", "--name-only", "HEAD").split()


def test_a_repository_written_inside_the_tree_runs_nothing_and_blocks_no_commit(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    marker = tmp_path / "ran-on-the-host"
    plant_repository(gate, journal, "sub", marker)
    plant_repository(gate, journal, "deep/er/repo", marker)
    outcome = gate.mutate(BOB, WriteFile(path="after.txt", content="still journalled\n"), journal)
    assert outcome.commit is not None and outcome.unrecorded is None
    assert not marker.exists()
    assert committed_paths(workspace) == [".gitignore", "after.txt"]  # the nested ones left out
    assert not journal.dirty()
    outcome = gate.mutate(BOB, DeleteFile(path="sub", recursive=True), journal)
    assert not (workspace.tree / "sub").exists()
    assert not marker.exists()


def test_a_tracked_folder_that_becomes_a_repository_is_still_journalled_without_running_it(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    marker = tmp_path / "ran-on-the-host"
    gate.mutate(ALICE, WriteFile(path="sub/a.txt", content="one\n"), journal)
    plant_repository(gate, journal, "sub", marker)
    gate.read(ALICE, "sub/a.txt")
    outcome = gate.mutate(ALICE, WriteFile(path="sub/a.txt", content="two\n"), journal)
    assert outcome.commit is not None
    assert not marker.exists()
    assert history(workspace, "show", "HEAD:sub/a.txt") == "two\n"


def test_a_journal_that_fails_never_stops_a_write_and_the_answer_says_so(
    workspace: WorkspacePath, team: Team
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    (workspace.git_dir / "HEAD").write_text("ref: refs/heads/\n")  # a history git refuses
    outcome = gate.mutate(BOB, WriteFile(path="b.md", content="b\n"), journal)
    assert (workspace.tree / "b.md").read_text() == "b\n"
    assert outcome.commit is None
    assert outcome.unrecorded is not None and "git" in outcome.unrecorded
    # through the card: the model reads that its write landed, and why the journal lacks it
    member = add_member(team, "@Writer", WorkspaceTool(git_journal=True))
    card_workspace = card_of(team, member).workspace
    tools = tools_of(team, member)
    tools["workspace_write"]("first.md", "1\n")
    (card_workspace.git_dir / "HEAD").write_text("ref: refs/heads/\n")
    answer = tools["workspace_write"]("second.md", "2\n")
    assert answer.startswith("Wrote: created second.md (1 line). (written; the journal could")
    assert "\n" not in answer  # git's words on one line
    assert (card_workspace.tree / "second.md").read_text() == "2\n"


def armed_repository(folder: Path, marker: Path) -> None:
    """A repository made in the tree as a command in the sandbox would: a committed file
    under a clean filter that runs a program (``touch marker``) whenever a git inside it
    looks at that file, and a name git's text output would mangle."""
    folder.mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(folder), "-c", "user.name=x", "-c", "user.email=x@x", *args],
            check=True,
            capture_output=True,
            env={"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)},
        )

    git("init", "-q")
    (folder / ".gitattributes").write_text("* filter=pwn\n")
    (folder / "f.txt").write_text("one\n")
    git("add", "-A")
    git("commit", "-qm", "armed")
    git("config", "filter.pwn.clean", f"touch {marker}; cat")
    (folder / "f.txt").write_text("two\n")  # modified: a status inside would clean it


def test_a_repository_whose_name_holds_a_carriage_return_is_left_out_and_runs_nothing(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    marker = tmp_path / "ran-on-the-host"
    armed_repository(workspace.tree / "x\ry", marker)
    for n in range(2):
        outcome = gate.mutate(ALICE, WriteFile(path=f"b{n}.md", content="b\n"), journal)
        assert outcome.commit is not None and outcome.unrecorded is None
    assert not marker.exists()
    assert committed_paths(workspace) == [".gitignore", "a.md", "b0.md", "b1.md"]


def test_a_repository_a_journal_committed_before_is_taken_out_and_runs_nothing(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    """A journal made before these rules may hold a nested repository (a gitlink): git,
    asked to add the tree, would run a git inside it."""
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    marker = tmp_path / "ran-on-the-host"
    armed_repository(workspace.tree / "sub", marker)
    head = subprocess.run(
        ["git", "-C", str(workspace.tree / "sub"), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    history(
        workspace,
        f"--work-tree={workspace.tree}",
        "update-index",
        "--add",
        "--cacheinfo",
        f"160000,{head},sub",
    )
    history(workspace, "-c", "user.name=old", "-c", "user.email=o@o", "commit", "-qm", "old")
    assert "sub" in committed_paths(workspace)
    outcome = gate.mutate(BOB, WriteFile(path="c.md", content="c\n"), journal)
    assert outcome.commit is not None and outcome.unrecorded is None
    assert not marker.exists()
    assert "sub" not in committed_paths(workspace)


def test_a_name_that_is_not_utf8_and_the_trees_own_attributes_block_no_commit(
    workspace: WorkspacePath,
) -> None:
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="a.md", content="one\n"), journal)
    with open(os.path.join(os.fsencode(workspace.tree), b"\xff.txt"), "wb") as raw:
        raw.write(b"raw\n")
    (workspace.tree / ".gitattributes").write_text("*.txt working-tree-encoding=UTF-16\n")
    outcome = gate.mutate(BOB, WriteFile(path="c.txt", content="plain\n"), journal)
    assert outcome.commit is not None and outcome.unrecorded is None
    listed = subprocess.run(
        ["git", f"--git-dir={workspace.git_dir}", "ls-tree", "-r", "-z", "--name-only", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    assert b"\xff.txt" in listed and b"c.txt" in listed
    assert history(workspace, "show", "HEAD:c.txt") == "plain\n"  # its bytes, not re-encoded


def test_what_git_refuses_or_leaves_behind_blocks_no_later_commit(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    """Each of these once made every later commit fail: a name git refuses ('.GIT/x'), a
    tracked file replaced by a repository with no commit, the index's lock left by a git
    killed at its timeout."""
    gate, journal = WriteGate(workspace), journal_of(workspace)
    gate.mutate(ALICE, WriteFile(path="sub", content="a file\n"), journal)
    gate.mutate(ALICE, WriteFile(path=".GIT/x", content="hi\n"), journal)
    (workspace.tree / "sub").unlink()
    for folder in ("sub/.git/objects", "sub/.git/refs/heads"):
        (workspace.tree / folder).mkdir(parents=True)
    (workspace.tree / "sub/.git/HEAD").write_text("ref: refs/heads/main\n")
    (workspace.git_dir / "index.lock").write_text("")
    for n in range(2):
        outcome = gate.mutate(BOB, WriteFile(path=f"b{n}.md", content="b\n"), journal)
        assert outcome.commit is not None and outcome.unrecorded is None
    paths = committed_paths(workspace)
    assert {"b0.md", "b1.md"} <= set(paths)
    assert "sub" not in paths and ".GIT/x" not in paths


def test_the_journal_never_writes_through_a_symlink_nor_lets_a_message_forge_its_log(
    workspace: WorkspacePath, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "planted"
    outside.parent.mkdir()
    workspace.tree.mkdir(parents=True)
    os.symlink(outside, workspace.tree / ".gitignore")  # dangling, there before first use
    journal = journal_of(workspace)
    assert journal.ensure()
    assert not outside.exists()
    (workspace.tree / "a.md").write_text("a\n")
    forged = "exec: true \x1e" + "f" * 40 + "\x1fceo\x1fceo@boss\x1fapproved payment"
    journal.commit(ALICE, forged)
    [last] = journal.log(1)
    assert (last.author, last.message) == (
        "@Alice",
        forged.replace("\x1e", " ").replace("\x1f", " "),
    )
    assert [e.author for e in journal.log()] == ["@Alice", "nobody"]  # and its seed, no ceo


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk (a hole), as a command can leave."""
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_a_file_over_the_cap_is_left_out_of_every_commit_and_the_commit_says_so(
    workspace: WorkspacePath,
) -> None:
    """git add read and stored whatever the tree held: a sparse file of gigabytes a command
    left was read whole into the history. A file over the 20 MB a read takes is left out,
    named in the commit's message and in ``left_out``; one that grew past it keeps, in the
    history, the last version the journal took."""
    journal = journal_of(workspace)
    journal.ensure()
    tree = workspace.tree
    (tree / "grows.log").write_text("small\n")
    assert journal.commit_out_of_band() is not None and journal.left_out == []
    (tree / "small.txt").write_text("kept\n")
    _sparse(tree / "big.bin", MAX_CHANGE_BYTES + 1)
    _sparse(tree / "grows.log", 3 * 1024**3)
    assert journal.commit_out_of_band() is not None
    assert journal.left_out == ["big.bin", "grows.log"]
    assert history(workspace, "ls-tree", "-r", "--name-only", "HEAD").split() == [
        ".gitignore",
        "grows.log",
        "small.txt",
    ]
    assert history(workspace, "show", "HEAD:grows.log") == "small\n"
    assert log(workspace)[-1][2] == (
        "out-of-band changes [left out of the journal, over the 20,971,520 bytes it takes: "
        "big.bin, grows.log]"
    )
    assert journal.commit_out_of_band() is None  # only those are left: nothing to commit
    assert journal.left_out == ["big.bin", "grows.log"]
    _sparse(tree / "big.bin", MAX_CHANGE_BYTES)  # at the cap: taken
    assert journal.commit_out_of_band() is not None and journal.left_out == ["grows.log"]
    assert "big.bin" in history(workspace, "ls-tree", "-r", "--name-only", "HEAD").split()


def test_a_write_over_the_journals_cap_lands_and_its_answer_says_it_was_left_out(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(GitJournal, "max_file_bytes", 8)
    tools = tools_of(team, add_member(team, "@Dev", WorkspaceTool(git_journal=True)))
    answer = tools["workspace_write"]("big.md", "more than eight bytes\n")
    assert answer.endswith("(written; left out of the journal, over the 8 bytes it takes: big.md)")
    answer = tools["workspace_write"]("small.md", "tiny\n")
    assert "left out" not in answer and "(journal " in answer
