"""Workspace work in the CLI: each file change and each command shown as it happens, and the
coder example end to end, offline (the scripted model, commands in bubblewrap)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.cli.describe import Describer
from akgentic.core import ActorAddressProxy
from akgentic.tool.sandbox import BubblewrapBackend
from akgentic.tool.workspace import ExecFinishedEvent, ExecStartedEvent, WorkspaceChangeEvent

from .conftest import REPO, Invoke, assert_in_order
from .test_live import event, record, view

TREE = ActorAddressProxy(agent_id=uuid4(), name="#Workspace-alice/_team/t")
CODER = REPO / "examples" / "teams" / "coder.yaml"


def change(
    action: str, added: int = 0, removed: int = 0, op: str = "write"
) -> WorkspaceChangeEvent:
    return WorkspaceChangeEvent(
        workspace="alice/_team/t",
        agent="@Coder",
        op=op,
        path="slug.py",
        action=action,
        added=added,
        removed=removed,
    )


def test_the_live_view_shows_file_changes_and_commands() -> None:
    live, out = view()
    live.render(record(1, event(TREE, change("created", 6))))
    live.render(record(2, event(TREE, change("modified", 1, 1))))
    live.render(record(3, event(TREE, change("deleted", 0, 6, op="exec"))))
    start = ExecStartedEvent(
        workspace="w",
        agent="@Coder",
        run_id="r1",
        command="python3 -m unittest",
        backend="bubblewrap",
    )
    live.render(record(4, event(TREE, start)))
    done = dict(workspace="w", agent="@Coder", run_id="r1", command="python3 -m unittest")
    live.render(
        record(5, event(TREE, ExecFinishedEvent(**done, exit_code=1, duration_seconds=0.25)))
    )
    live.render(record(6, event(TREE, ExecFinishedEvent(**done, exit_code=124, timed_out=True))))
    live.render(record(7, event(TREE, ExecFinishedEvent(**done, error="exec is unavailable here"))))
    live.render(
        record(8, event(TREE, ExecFinishedEvent(**done, exit_code=0, duration_seconds=0.1)))
    )
    assert out.getvalue().splitlines() == [
        "◆ @Coder created slug.py (+6 -0)",
        "◆ @Coder modified slug.py (+1 -1)",
        "◆ @Coder deleted slug.py (by a command)",
        "$ @Coder python3 -m unittest",
        "✗ @Coder's python3 -m unittest ended: exit 1 (0.25s)",
        "✗ @Coder's python3 -m unittest was killed at its budget (exit 124)",
        "✗ @Coder's command did not run: exec is unavailable here",
        "✓ @Coder's python3 -m unittest ended: exit 0 (0.10s)",
    ]


def test_events_and_show_summarise_workspace_work() -> None:
    describer = Describer()
    kind, line = describer.describe(record(1, event(TREE, change("modified", 2, 0))))
    assert (kind, line) == ("WorkspaceChangeEvent", "@Coder modified slug.py (+2 -0)")
    start = ExecStartedEvent(
        workspace="w", agent="@Coder", run_id="r", command="make", backend="docker"
    )
    assert describer.describe(record(2, event(TREE, start))) == (
        "ExecStartedEvent",
        "@Coder $ make",
    )


def _bwrap_reason() -> str | None:
    return BubblewrapBackend().unavailable_reason()


@pytest.mark.skipif(
    _bwrap_reason() is not None, reason=f"bubblewrap sandbox unavailable: {_bwrap_reason()}"
)
def test_the_coder_example_writes_runs_fails_fixes_and_runs_green(
    cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    monkeypatch.setenv("AKGENTIC_SANDBOX_BACKEND", "bubblewrap")
    result = cli("run", str(CODER), "--message", "write a slugify function")
    assert result.exit_code == 0, result.output
    run = "python3 -m unittest -v test_slug"
    assert_in_order(
        result.stdout,
        [
            "@Human → @Coder: write a slugify function",
            "◆ @Coder created slug.py (+6 -0)",
            "◆ @Coder created test_slug.py (+15 -0)",
            f"$ @Coder {run}",
            "✓ @Coder workspace_exec returned",
            "⚙ @Coder → workspace_read(path=slug.py)",
            "◆ @Coder modified slug.py (+1 -1)",
            f"$ @Coder {run}",
        ],
    )
    lines = result.stdout.splitlines()
    ended = [line for line in lines if f"{run} ended" in line]
    assert ended[0].startswith(f"✗ @Coder's {run} ended: exit 1 (")
    assert ended[1].startswith(f"✓ @Coder's {run} ended: exit 0 (")
    assert lines[-1].startswith("answer: [scripted] slug.py is done and its tests pass")
    # The tree holds the fixed module, and the journal says who did what.
    [tree] = [p for p in root.glob("*/_team/*") if p.is_dir() and not p.suffix]
    assert 'text.lower()).strip("-")' in (tree / "slug.py").read_text()
    log = subprocess.run(
        ["git", f"--git-dir={tree.with_name(tree.name + '.git')}", "log", "--format=%an %s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log == [
        "@Coder edit slug.py",
        "@Coder write test_slug.py",
        "@Coder write slug.py",
        "nobody journal: seeded .gitignore",
    ]
