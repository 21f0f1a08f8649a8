"""A separate process appending to one file through the write gate (run by test_processes).

Usage: ``python gate_writer.py ROOT NAME COUNT``. Waits for a line on stdin (so both
writers start together), then appends ``COUNT`` lines ``NAME i`` to ``counter.txt``: read,
append, write — and on a refusal, read again and redo. Prints the number of refusals.
"""

from __future__ import annotations

import sys
from pathlib import Path

from akgentic.tool.workspace import GateRefusalError, Identity, WriteFile, WriteGate
from akgentic.tool.workspace.workspace import KIND_ID, resolve_workspace_path


def main(root: str, name: str, count: int) -> None:
    gate = WriteGate(resolve_workspace_path(kind=KIND_ID, leaf="shared", root=Path(root)))
    me = Identity(name=name, team="processes")
    sys.stdin.readline()
    refusals = 0
    for i in range(count):
        while True:
            text = gate.read(me, "counter.txt").decode()
            try:
                gate.mutate(me, WriteFile(path="counter.txt", content=f"{text}{name} {i}\n"))
                break
            except GateRefusalError:
                refusals += 1
    print(refusals, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
