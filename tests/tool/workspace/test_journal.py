"""The git journal: one commit per accepted mutation, authored by the agent; out-of-band
changes belong to nobody; without git it is off, said once."""

from __future__ import annotations

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
    WorkspaceTool,
    WriteFile,
    WriteGate,
)
from akgentic.tool.workspace import journal as journal_module
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
    show = subprocess.run(
        ["git", f"--git-dir={workspace.git_dir}", "show", "--name-only", "--format=", "HEAD~1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert show.stdout.split() == ["by_hand.txt"]  # not swept into @Bob's commit


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
