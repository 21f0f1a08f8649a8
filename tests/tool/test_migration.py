"""Moved import paths: shims warn on attribute access (not import), withdrawn paths fail."""

from __future__ import annotations

import subprocess
import sys

import pytest

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import CommandsAnnouncedEvent, ToolStateEvent
from akgentic.tool.core import event as core_event
from akgentic.tool.vector_store.vector import VectorEntry


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with DeprecationWarning as an error."""
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_the_facades_does_not_warn() -> None:
    result = run_python("import akgentic.tool.event, akgentic.tool.vector")
    assert result.returncode == 0, result.stderr


def test_touching_a_shimmed_name_warns() -> None:
    result = run_python("import akgentic.tool.event as e; e.ToolStateEvent")
    assert result.returncode != 0
    assert "DeprecationWarning" in result.stderr
    assert "moved to akgentic.tool.core.event" in result.stderr


def test_the_package_root_never_warns() -> None:
    result = run_python(
        "from akgentic.tool import ToolStateEvent, CommandsAnnouncedEvent, ToolObserver, "
        "ActorToolObserver, ToolCard, ToolFactory, CommandRegistry, Channels, COMMAND"
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "name", ["ToolStateEvent", "CommandArg", "CommandDescriptor", "CommandsAnnouncedEvent"]
)
def test_event_shims_resolve_to_the_moved_class(name: str) -> None:
    import akgentic.tool.event as old

    with pytest.warns(DeprecationWarning, match=f"akgentic.tool.event.{name} moved"):
        resolved = getattr(old, name)
    assert resolved is getattr(core_event, name)


def test_vector_entry_shim_resolves() -> None:
    import akgentic.tool.vector as old

    with pytest.warns(DeprecationWarning, match="VectorEntry moved"):
        assert old.VectorEntry is VectorEntry


def test_from_import_of_a_shimmed_name_warns() -> None:
    with pytest.warns(DeprecationWarning):
        from akgentic.tool.event import CommandsAnnouncedEvent as Old
    assert Old is CommandsAnnouncedEvent


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("akgentic.tool.event", "ToolObserver", "akgentic.tool.core.observer"),
        ("akgentic.tool.event", "ActorToolObserver", "akgentic.tool.core.observer"),
        ("akgentic.tool.event", "TeamManagementToolObserver", "akgentic.tool.team.observer"),
        ("akgentic.tool.vector", "EmbeddingService", "akgentic.tool.vector_store.vector"),
        ("akgentic.tool.vector", "VectorIndex", "akgentic.tool.vector_store.vector"),
    ],
)
def test_withdrawn_names_raise_import_error_naming_the_new_home(
    module: str, name: str, home: str
) -> None:
    with pytest.raises(ImportError, match=rf"{name} was withdrawn; import it from .*{home}"):
        exec(f"from {module} import {name}")


@pytest.mark.parametrize("module", ["akgentic.tool", "akgentic.tool.sandbox"])
def test_exec_tool_is_refused_naming_its_replacement(module: str) -> None:
    with pytest.raises(ImportError, match=r"WorkspaceTool\(workspace_exec=\.\.\.\)"):
        exec(f"from {module} import ExecTool")


def test_unknown_names_are_still_attribute_errors() -> None:
    import akgentic.tool
    import akgentic.tool.event

    with pytest.raises(AttributeError):
        akgentic.tool.event.Nothing  # noqa: B018
    with pytest.raises(AttributeError):
        akgentic.tool.Nothing  # noqa: B018


def test_rows_stored_under_the_old_paths_still_decode() -> None:
    stored_event = serialize(ToolStateEvent(tool_id="#T", seq=1, payload=CommandsAnnouncedEvent()))
    stored_event["__model__"] = "akgentic.tool.event.ToolStateEvent"
    stored_event["payload"]["__model__"] = "akgentic.tool.event.CommandsAnnouncedEvent"
    back = deserialize(stored_event)
    assert isinstance(back, ToolStateEvent) and isinstance(back.payload, CommandsAnnouncedEvent)

    stored_entry = {
        "__model__": "akgentic.tool.vector.VectorEntry",
        "ref_id": "r1",
        "text": "hello",
        "vector": [0.5, 1.0],
    }
    entry = deserialize(stored_entry)
    assert entry == VectorEntry(ref_id="r1", text="hello", vector=[0.5, 1.0])
    assert serialize(entry)["__model__"] == "akgentic.tool.vector_store.vector.VectorEntry"


def test_vector_alias_is_registered_by_importing_the_package_root() -> None:
    code = (
        "import akgentic.tool\n"
        "from akgentic.core.serialization import deserialize\n"
        "e = deserialize({'__model__': 'akgentic.tool.vector.VectorEntry', 'ref_id': 'r', "
        "'text': 't', 'vector': []})\n"
        "assert type(e).__name__ == 'VectorEntry'"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
