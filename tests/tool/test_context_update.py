"""ContextUpdater: one block per turn, persisted baselines, and the trust gate."""

from __future__ import annotations

import copy
import gc
from dataclasses import dataclass, field
from typing import Any

import pytest

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import ContextState, ContextUpdater, ToolObserverGone, ToolState
from akgentic.tool.core import iter_message_texts

from .conftest import AgentStateWithTools, FakeAgent


class Rows(ContextState):
    """A small row state: full is every row, the delta is the rows that differ."""

    rows: dict[str, str] = {}

    def render_full(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in sorted(self.rows.items()))

    def render_delta(self, previous: Rows) -> str | None:
        lines = [f"{k}: {v}" for k, v in sorted(self.rows.items()) if previous.rows.get(k) != v]
        lines += [f"{k}: removed" for k in sorted(previous.rows) if k not in self.rows]
        return "\n".join(lines) or None


class Flag(ContextState):
    on: bool = False

    def render_full(self) -> str:
        return f"flag {'on' if self.on else 'off'}"

    def render_delta(self, previous: Flag) -> str | None:
        return None if previous.on == self.on else self.render_full()


class Source:
    """A live row store that hands out snapshots."""

    def __init__(self, **rows: str) -> None:
        self.rows = dict(rows)
        self.available = True

    def provider(self) -> Any:
        def tasks() -> Rows | None:
            return Rows(rows=dict(self.rows)) if self.available else None

        return tasks


def make(agent: FakeAgent, *sources: Any) -> ContextUpdater:
    return ContextUpdater(agent, [s.provider() if isinstance(s, Source) else s for s in sources])


def tool_state(agent: FakeAgent) -> ToolState:
    state: ToolState = agent.state.tool_state
    return state


def test_first_turn_is_a_full_snapshot_then_deltas(agent: FakeAgent) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    history: list[Any] = []

    first = updater.compose_update(history)
    assert first == "**Context update 1**\n\na: todo\nb: todo"
    history.append(first)
    assert tool_state(agent).context_update_seq == 1
    assert set(tool_state(agent).context_baselines) == {"tasks"}

    assert updater.compose_update(history) is None  # nothing changed
    assert tool_state(agent).context_update_seq == 1

    source.rows["b"] = "done"
    second = updater.compose_update(history)
    assert second == "**Context update 2**\n\nb: done"


def test_one_block_for_all_providers_first_seen_state_renders_full(agent: FakeAgent) -> None:
    source = Source(a="todo")
    flag = Flag(on=True)

    def flag_state() -> Flag:
        return flag

    history: list[Any] = [make(agent, source).compose_update([])]
    source.rows["a"] = "done"
    block = make(agent, source, flag_state).compose_update(history)  # a provider joins
    assert block == "**Context update 2**\n\na: done\n\nflag on"


# -- the trust gate ----------------------------------------------------------------------


def test_trust_gate_counter_behind_the_markers_keeps_baselines_and_restates(
    agent: FakeAgent,
) -> None:
    source = Source(a="todo", b="todo", c="todo")
    updater = make(agent, source)
    history: list[Any] = [updater.compose_update([])]
    saved = deserialize(serialize(tool_state(agent)))  # the last save that reached disk

    source.rows["a"] = "done"
    history.append(updater.compose_update(history))
    source.rows["b"] = "done"
    history.append(updater.compose_update(history))
    assert [h.splitlines()[0] for h in history] == [
        "**Context update 1**",
        "**Context update 2**",
        "**Context update 3**",
    ]

    agent.state = AgentStateWithTools(tool_state=saved)  # restored: counter says 1
    block = updater.compose_update(history)
    # A repeat, never an omission: the missed deltas are re-stated against baseline 1,
    # and the block is numbered past every visible marker.
    assert block == "**Context update 4**\n\na: done\nb: done"
    assert tool_state(agent).context_update_seq == 4


def test_trust_gate_last_marker_gone_drops_baselines_for_a_full_snapshot(
    agent: FakeAgent,
) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    updater.compose_update([])
    source.rows["a"] = "done"
    compacted = ["(summary of earlier turns)"]  # the block with marker 1 was compacted away
    block = updater.compose_update(compacted)
    assert block == "**Context update 2**\n\na: done\nb: todo"


def test_trust_gate_marker_visible_gives_an_ordinary_delta(agent: FakeAgent) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    history = ["hello", updater.compose_update([]), "ok"]
    source.rows["a"] = "done"
    assert updater.compose_update(history) == "**Context update 2**\n\na: done"


def test_a_block_that_was_never_appended_widens_the_next_one(agent: FakeAgent) -> None:
    source = Source(a="todo")
    updater = make(agent, source)
    history = [updater.compose_update([])]
    source.rows["a"] = "doing"
    lost = updater.compose_update(history)  # composed, but the agent never appended it
    assert lost == "**Context update 2**\n\na: doing"
    source.rows["b"] = "new"
    block = updater.compose_update(history)  # marker 2 is not visible: full snapshot
    assert block == "**Context update 3**\n\na: doing\nb: new"


def test_restored_baselines_resume_deltas_instead_of_a_full_snapshot(agent: FakeAgent) -> None:
    source = Source(**{f"r{i}": "x" for i in range(5)})
    updater = make(agent, source)
    history = [updater.compose_update([])]
    stored = serialize(agent.state)  # the agent's checkpoint
    agent.state = deserialize(stored)  # ... and its restore
    source.rows["r3"] = "y"
    assert updater.compose_update(history) == "**Context update 2**\n\nr3: y"


# -- providers ---------------------------------------------------------------------------


def test_a_provider_returning_none_is_skipped_and_its_baseline_kept(agent: FakeAgent) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    history: list[Any] = [updater.compose_update([])]
    source.available = False
    source.rows["a"] = "done"
    assert updater.compose_update(history) is None
    source.available = True
    assert updater.compose_update(history) == "**Context update 2**\n\na: done"


def test_a_state_whose_type_changed_renders_full(agent: FakeAgent) -> None:
    current: list[ContextState] = [Rows(rows={"a": "x"})]

    def tasks() -> ContextState:
        return current[0]

    updater = ContextUpdater(agent, [tasks])
    history = [updater.compose_update([])]
    current[0] = Flag(on=False)
    assert updater.compose_update(history) == "**Context update 2**\n\nflag off"


def test_an_empty_first_state_sends_nothing(agent: FakeAgent) -> None:
    updater = make(agent, Source())
    assert updater.compose_update([]) is None
    assert tool_state(agent).context_update_seq == 0


def test_duplicate_provider_names_are_refused(agent: FakeAgent) -> None:
    with pytest.raises(ValueError, match="share the name 'tasks'"):
        make(agent, Source(), Source())


# -- the ToolState is read through the observer, every call --------------------------------


def test_tool_state_is_never_cached(agent: FakeAgent) -> None:
    source = Source(a="todo")
    updater = make(agent, source)
    history = [updater.compose_update([])]
    old = tool_state(agent)
    agent.state = AgentStateWithTools()  # replaced wholesale, as on restore
    block = updater.compose_update(history)
    assert block == "**Context update 2**\n\na: todo"  # new slot: nothing trusted
    assert tool_state(agent).context_update_seq == 2
    assert old.context_update_seq == 1  # the replaced slot was not written


def test_reset_zeroes_both_fields(agent: FakeAgent) -> None:
    updater = make(agent, Source(a="x"))
    updater.compose_update([])
    updater.reset()
    assert tool_state(agent).context_baselines == {}
    assert tool_state(agent).context_update_seq == 0
    assert updater.compose_update([]) == "**Context update 1**\n\na: x"


def test_a_state_without_the_slot_is_a_clear_error(agent: FakeAgent) -> None:
    agent.state = object()
    with pytest.raises(TypeError, match="tool_state: ToolState"):
        make(agent, Source()).compose_update([])


def test_a_collected_observer_is_tool_observer_gone() -> None:
    agent = FakeAgent()
    updater = make(agent, Source(a="x"))
    del agent
    gc.collect()
    with pytest.raises(ToolObserverGone):
        updater.compose_update([])


# -- history shapes ---------------------------------------------------------------------------


@dataclass
class TextPart:
    content: Any


@dataclass
class ToolCallPart:
    tool_name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelRequest:
    parts: list[Any]


@dataclass
class ModelResponse:
    parts: list[Any]


def test_text_is_extracted_from_message_objects() -> None:
    history: list[object] = [
        "plain",
        ModelRequest(parts=[TextPart("from the user"), TextPart(["multi", 3, "modal"])]),
        ModelResponse(parts=[ToolCallPart("lookup", {"q": "**Context update 9**"})]),
        TextPart("content only"),
        42,
        None,
    ]
    assert list(iter_message_texts(history)) == [
        "plain",
        "from the user",
        "multi",
        "modal",
        "content only",
    ]


def test_markers_are_found_inside_message_parts(agent: FakeAgent) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    block = updater.compose_update([])
    assert block is not None
    history = [ModelRequest(parts=[TextPart("question"), TextPart(block)])]
    source.rows["a"] = "done"
    assert updater.compose_update(history) == "**Context update 2**\n\na: done"


def test_a_marker_quoted_mid_line_does_not_count(agent: FakeAgent) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    updater.compose_update([])
    source.rows["a"] = "done"
    quoted = ["as the **Context update 1** said"]
    assert updater.compose_update(quoted) == "**Context update 2**\n\na: done\nb: todo"


def test_the_last_block_keeps_its_sections_by_provider(agent: FakeAgent) -> None:
    source = Source(a="todo")
    flag = Flag(on=True)

    def flag_state() -> Flag:
        return flag

    updater = make(agent, source, flag_state)
    block = updater.compose_update([])
    assert updater.last_sections == [("tasks", "a: todo"), ("flag_state", "flag on")]
    assert block == "\n\n".join(["**Context update 1**", "a: todo", "flag on"])
    source.rows["a"] = "done"
    updater.compose_update([block])
    assert updater.last_sections == [("tasks", "a: done")]
    assert updater.compose_update([block, "**Context update 2**"]) is None
    assert updater.last_sections == []


@dataclass
class Said:
    """A history message object (read through ``.content``)."""

    content: str


def test_the_markers_follow_a_history_that_grows_and_is_compacted_in_place(
    agent: FakeAgent,
) -> None:
    source = Source(a="todo", b="todo")
    updater = make(agent, source)
    opening = Said("hello")
    history: list[Any] = [opening, Said(updater.compose_update([opening]) or "")]
    for turn, row in enumerate(("a", "b"), start=2):  # the same list, a few messages longer
        history.append(Said("ok"))
        source.rows[row] = "done"
        block = updater.compose_update(history)
        assert block == f"**Context update {turn}**\n\n{row}: done"
        history.append(Said(block))
    assert updater.compose_update(history) is None  # block 3 read: delivered, nothing new

    # compacted: the same first message, then a summary where the blocks were
    compacted: list[Any] = [opening, Said("(summary of earlier turns)")]
    source.rows["c"] = "new"
    block = updater.compose_update(compacted)
    assert block == "**Context update 4**\n\na: done\nb: done\nc: new"  # full: none visible

    compacted.append(Said(block))
    source.rows["c"] = "done"
    block = updater.compose_update(compacted)
    assert block == "**Context update 5**\n\nc: done"
    compacted += [Said(block), Said("ok")]

    del compacted[3]  # block 5's message taken out of the middle of the same list
    source.rows["a"] = "again"
    assert updater.compose_update(compacted) == (
        "**Context update 6**\n\na: again\nb: done\nc: done"
    )


def test_a_deep_copy_of_a_tool_state_shares_its_baselines_and_detaches_the_rest() -> None:
    """A baseline never changes once handed out, so the agent's state snapshot (a deep copy
    at every state change) shares it; the dict holding the baselines is still its own."""
    rows = Rows(rows={"a": "1"})
    state = ToolState(context_baselines={"rows": rows}, context_update_seq=3)
    copied = copy.deepcopy(state)
    assert copied.context_baselines["rows"] is rows
    assert copied.context_baselines is not state.context_baselines
    copied.context_baselines["other"] = Flag(on=True)
    copied.context_update_seq = 4
    assert set(state.context_baselines) == {"rows"} and state.context_update_seq == 3


def test_a_provider_handing_back_its_baseline_renders_nothing(agent: FakeAgent) -> None:
    class Strict(Rows):
        def render_delta(self, previous: Rows) -> str | None:
            raise AssertionError("the very baseline needs no diff")

    state = Strict(rows={"a": "1"})

    def strict() -> Strict:
        return state

    updater = ContextUpdater(agent, [strict])
    first = updater.compose_update([])
    assert first is not None and "a: 1" in first
    assert updater.compose_update([first]) is None


class Fragile(ContextState):
    """A state whose rendering has a bug when ``broken``."""

    broken: bool = False

    def render_full(self) -> str:
        if self.broken:
            raise KeyError("missing row")
        return "fragile ok"

    def render_delta(self, previous: Fragile) -> str | None:
        return self.render_full() if self.broken else None


def test_a_provider_that_raises_is_skipped_and_the_others_still_deliver(
    agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    source = Source(a="todo")
    failing = True

    def broken_board() -> Rows | None:
        if failing:
            raise RuntimeError("provider broke")
        return Rows(rows={"x": "1"})

    updater = make(agent, broken_board, source)
    history: list[Any] = [updater.compose_update([])]
    assert history[0] == "**Context update 1**\n\na: todo"
    assert updater.last_failures == [("broken_board", "RuntimeError: provider broke")]
    assert "broken_board" in caplog.text and "provider broke" in caplog.text
    failing = False  # fixed: first seen, so rendered in full; the failure is forgotten
    assert updater.compose_update(history) == "**Context update 2**\n\nx: 1"
    assert updater.last_failures == []


def test_a_state_that_fails_to_render_keeps_its_baseline(agent: FakeAgent) -> None:
    state = Fragile()

    def fragile() -> Fragile:
        return state

    updater = make(agent, fragile)
    history: list[Any] = [updater.compose_update([])]
    assert history[0] == "**Context update 1**\n\nfragile ok"
    baseline = tool_state(agent).context_baselines["fragile"]
    state = Fragile(broken=True)
    assert updater.compose_update(history) is None
    assert updater.last_failures == [("fragile", "KeyError: 'missing row'")]
    assert tool_state(agent).context_baselines["fragile"] is baseline


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("my __str__ is broken too")


def test_a_provider_raising_an_unprintable_exception_costs_only_its_section(
    agent: FakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    source = Source(a="todo")

    def broken_board() -> Rows | None:
        raise UnprintableError()

    updater = make(agent, broken_board, source)
    assert updater.compose_update([]) == "**Context update 1**\n\na: todo"
    assert updater.last_failures == [("broken_board", "UnprintableError (unprintable)")]
    assert "broken_board" in caplog.text


def test_a_provider_failure_is_named_without_its_secrets(agent: FakeAgent) -> None:
    def remote_board() -> Rows | None:
        raise ConnectionError("https://api.x.com/v1/board?token=SECRET789")

    updater = make(agent, remote_board)
    assert updater.compose_update([]) is None
    assert updater.last_failures == [("remote_board", "ConnectionError: https://api.x.com/…")]
