"""Qdrant local mode on disk: a folder another process holds, a damaged folder, one folder
spelt two ways. Each refusal is one line that names the folder and says what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from akgentic.tool.vector_store import (
    QdrantBackend,
    VectorEntry,
    VectorStoreConfig,
    VectorStoreConfigError,
    close_client,
)

HOLD = """
import sys
from qdrant_client import QdrantClient
client = QdrantClient(path=sys.argv[1])
print("holding", flush=True)
sys.stdin.read()  # until the test closes our stdin
client.close()
"""


def backend(path: Path | str) -> QdrantBackend:
    return QdrantBackend(VectorStoreConfig(backend="qdrant", path=str(path)))


def filled(path: Path) -> None:
    """A folder with one collection and one row, closed."""
    store = backend(path)
    store.upsert("notes", "t", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0.0, 0.0])])
    close_client(store.key)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A folder another process has open, until the test ends."""
    folder = tmp_path / "qdrant"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "holding\n"
        yield folder
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


def test_a_folder_another_process_holds_is_one_line_saying_what_to_do(held: Path) -> None:
    with pytest.raises(VectorStoreConfigError) as refused:
        backend(held)
    message = str(refused.value)
    assert message == (
        f"the Qdrant folder {held} is open in another process (Qdrant local mode serves one "
        f"process at a time): stop that process, give this one another folder "
        f"(AKGENTIC_QDRANT_PATH), or use a Qdrant server (AKGENTIC_QDRANT_URL)"
    )


def _garbled_meta(folder: Path) -> None:
    (folder / "meta.json").write_text("{garbage")


def _garbled_rows(folder: Path) -> None:
    (folder / "collection" / "akgentic_notes" / "storage.sqlite").write_bytes(b"garbage" * 20)


def _empty_meta(folder: Path) -> None:
    (folder / "meta.json").write_text("")


@pytest.mark.parametrize("damage", [_garbled_meta, _garbled_rows, _empty_meta])
def test_a_damaged_folder_is_one_line_saying_what_to_do(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    folder = tmp_path / "qdrant"
    filled(folder)
    damage(folder)
    with pytest.raises(VectorStoreConfigError) as refused:
        backend(folder)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"the Qdrant folder {folder} cannot be opened (")
    assert message.endswith(
        "): move it aside, or point AKGENTIC_QDRANT_PATH at another folder, and start again "
        "(the consumers index their rows again as they start)"
    )
    # moved aside, the same path opens afresh: nothing of the failure was cached
    folder.rename(tmp_path / "damaged")
    store = backend(folder)
    try:
        assert store.ref_ids("notes", "t") == set()
    finally:
        close_client(store.key)


def test_a_path_that_is_a_file_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("not a folder")
    with pytest.raises(VectorStoreConfigError, match=r"^the Qdrant folder .* cannot be opened"):
        backend(file)


def test_one_folder_spelt_two_ways_is_one_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative and an absolute path to one folder were two cache keys, so the second
    client was refused by the lock the first one took — in the same process."""
    monkeypatch.chdir(tmp_path)
    relative = backend("qdrant")
    try:
        absolute = backend(tmp_path / "sub" / ".." / "qdrant")
        assert absolute.key == relative.key
        relative.upsert("notes", "t", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0.0])])
        assert absolute.ref_ids("notes", "t") == {"a"}
        assert json.loads((tmp_path / "qdrant" / "meta.json").read_text())["collections"]
    finally:
        close_client(relative.key)
