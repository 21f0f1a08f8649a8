"""Two real processes writing one file through the gate: the lock on the tree orders them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from akgentic.tool.workspace import Identity, WriteFile, WriteGate
from akgentic.tool.workspace.workspace import KIND_ID, resolve_workspace_path

WRITER = Path(__file__).with_name("gate_writer.py")
PER_PROCESS = 500


def test_two_processes_lose_no_update_in_a_thousand_interleaved_writes(tmp_path: Path) -> None:
    gate = WriteGate(resolve_workspace_path(kind=KIND_ID, leaf="shared", root=tmp_path))
    gate.mutate(Identity(name="@Setup"), WriteFile(path="counter.txt", content=""))
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), str(tmp_path), name, str(PER_PROCESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("@P1", "@P2")
    ]
    for writer in writers:  # both are running before either starts writing
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    outcomes = [writer.communicate(timeout=120) for writer in writers]
    assert [w.returncode for w in writers] == [0, 0], [err for _, err in outcomes]

    lines = (gate.fs.root / "counter.txt").read_text().splitlines()
    assert len(lines) == 2 * PER_PROCESS  # no lost update
    for name in ("@P1", "@P2"):
        mine = [line for line in lines if line.startswith(f"{name} ")]
        assert mine == [f"{name} {i}" for i in range(PER_PROCESS)]  # each in its own order
    assert all(out.strip().isdigit() for out, _ in outcomes)  # each reports its refusals
