"""ModelTool: routing on three channels, one builder per capability, the command grammar,
the persisted record, the LLM_CONTEXT provider and the observer contract."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, LLM_CONTEXT, TOOL_CALL, ActorToolObserver, RetriableError
from akgentic.tool import ToolFactory as Factory
from akgentic.tool.model import (
    LISTING_HEADER,
    NO_MODELS,
    ActiveModel,
    ActiveModelState,
    ListModels,
    ModelRow,
    ModelSwitchToolObserver,
    ModelTool,
    SwitchModel,
)

from ..conftest import FakeAgent


class RetryError(Exception):
    """Stands in for pydantic-ai's ModelRetry."""


def row(key: str, active: bool = False, context_length: int | None = None) -> ModelRow:
    provider, _, model = key.partition(":")
    return ModelRow(
        key=key, provider=provider, model=model, context_length=context_length, active=active
    )


class RosterAgent(FakeAgent):
    """A ModelSwitchToolObserver over an in-memory roster."""

    def __init__(self, keys: list[str], windows: dict[str, int] | None = None) -> None:
        super().__init__()
        self.keys = keys
        self.windows = windows or {}
        self.active = keys[0] if keys else None
        self.switched: list[str] = []
        self.notified = 0

    def list_model_rows(self) -> list[ModelRow]:
        return [row(k, k == self.active, self.windows.get(k)) for k in self.keys]

    def switch_model(self, key: str) -> str:
        self.switched.append(key)
        if key not in self.keys:
            raise ValueError(f"unknown model {key!r}")
        self.active = key
        return f"Switched to {key}."


ROSTER = ["openai:gpt-5.2", "anthropic:claude-x"]


@pytest.fixture
def roster() -> RosterAgent:
    return RosterAgent(ROSTER, {"openai:gpt-5.2": 400000})


def names(fns: list[Any]) -> list[str]:
    return [fn.__name__ for fn in fns]


# -- routing -------------------------------------------------------------------------------


def test_default_serves_each_capability_on_its_channels(roster: RosterAgent) -> None:
    factory = Factory([ModelTool()], observer=roster)
    assert names(factory.get_tools()) == ["list_models", "switch_model"]
    assert list(factory.get_commands()) == [ListModels, SwitchModel]
    assert factory.get_command_registry().names() == ["list_models", "switch_model"]
    assert names(factory.get_context_states()) == ["active_model"]
    assert factory.get_system_prompts() == []


def test_switch_off_is_read_only(roster: RosterAgent) -> None:
    factory = Factory([ModelTool(switch_model=False)], observer=roster)
    assert names(factory.get_tools()) == ["list_models"]
    assert list(factory.get_commands()) == [ListModels]


def test_humans_may_switch_while_the_model_may_not(roster: RosterAgent) -> None:
    card = ModelTool(switch_model=SwitchModel(expose={COMMAND}))
    factory = Factory([card], observer=roster)
    assert names(factory.get_tools()) == ["list_models"]
    assert factory.get_command_registry().names() == ["list_models", "switch_model"]


def test_active_model_exposed_on_tool_call_is_dropped_silently(roster: RosterAgent) -> None:
    card = ModelTool(active_model=ActiveModel(expose={TOOL_CALL}))
    factory = Factory([card], observer=roster)
    assert factory.get_context_states() == []
    assert names(factory.get_tools()) == ["list_models", "switch_model"]


def test_everything_off_serves_nothing_and_needs_no_roster() -> None:
    card = ModelTool(list_models=False, switch_model=False, active_model=False)
    factory = Factory([card], observer=FakeAgent())  # not a ModelSwitchToolObserver: fine
    assert factory.get_tools() == []
    assert factory.get_commands() == {}
    assert factory.get_context_states() == []


def test_tool_and_command_are_behaviourally_identical(roster: RosterAgent) -> None:
    factory = Factory([ModelTool()], observer=roster)
    tools = {fn.__name__: fn for fn in factory.get_tools()}
    commands = factory.get_commands()
    assert tools["list_models"]() == commands[ListModels]()
    assert inspect.signature(tools["switch_model"], eval_str=True) == inspect.signature(
        commands[SwitchModel], eval_str=True
    )
    said = inspect.getdoc(tools["switch_model"]) or ""
    assert "exactly as list_models shows it" in said  # the same text, in its reader's words
    assert inspect.getdoc(commands[SwitchModel]) == said.replace("list_models", "/list_models")


# -- listing -------------------------------------------------------------------------------


def test_listing_line_grammar(roster: RosterAgent) -> None:
    (list_models, _) = Factory([ModelTool()], observer=roster).get_tools()
    assert list_models() == (
        f"{LISTING_HEADER}\n"
        "* openai:gpt-5.2 — context window 400000 tokens\n"
        "- anthropic:claude-x — context window unknown"
    )


def test_empty_roster_lists_a_fixed_sentinel_and_publishes_nothing() -> None:
    empty = RosterAgent([])
    factory = Factory([ModelTool()], observer=empty)
    (list_models, _) = factory.get_tools()
    assert list_models() == NO_MODELS != ""
    (provider,) = factory.get_context_states()
    assert provider() is None


def test_a_failing_roster_is_a_retriable_error(roster: RosterAgent) -> None:
    def broken() -> list[ModelRow]:
        raise RuntimeError("llm layer exploded")

    roster.list_model_rows = broken  # type: ignore[method-assign]
    factory = Factory([ModelTool()], observer=roster, retry_exception=RetryError)
    (list_models, _) = factory.get_tools()
    with pytest.raises(RetryError, match="roster is unavailable"):
        list_models()
    (provider,) = factory.get_context_states()
    assert provider() is None  # providers never raise


def test_an_active_row_that_cannot_be_read_is_no_state_never_an_exception(
    roster: RosterAgent,
) -> None:
    class Unreadable:
        active = True

        def __getattr__(self, name: str) -> object:
            raise RuntimeError(f"the row's {name} is gone")

    roster.list_model_rows = lambda: [Unreadable()]  # type: ignore[method-assign,list-item]
    (provider,) = Factory([ModelTool()], observer=roster).get_context_states()
    assert provider() is None  # providers never raise


# -- the switch ----------------------------------------------------------------------------


def test_switch_writes_the_record_after_the_observer_accepted(roster: RosterAgent) -> None:
    (_, switch_model) = Factory([ModelTool()], observer=roster).get_tools()
    assert roster.state.tool_state.active_model is None
    assert switch_model("anthropic:claude-x") == "Switched to anthropic:claude-x."
    assert roster.switched == ["anthropic:claude-x"]
    assert roster.state.tool_state.active_model == "anthropic:claude-x"


def test_refused_switch_leaves_the_record_and_lists_the_keys(roster: RosterAgent) -> None:
    factory = Factory([ModelTool()], observer=roster, retry_exception=RetryError)
    (_, switch_model) = factory.get_tools()
    with pytest.raises(RetryError) as info:
        switch_model("mistral:large")
    message = str(info.value)
    assert "Cannot switch to 'mistral:large'" in message
    assert "openai:gpt-5.2, anthropic:claude-x" in message
    assert roster.state.tool_state.active_model is None


def test_when_the_roster_does_not_read_a_refused_switch_names_the_listing_call() -> None:
    """As its reader makes it: the model calls list_models, a person types /list_models."""

    class Unlisted(RosterAgent):
        def switch_model(self, key: str) -> str:
            self.keys = []  # the roster breaks between the switch and the listing
            return super().switch_model(key)

        def list_model_rows(self) -> list[ModelRow]:
            if not self.keys:
                raise RuntimeError("roster gone")
            return super().list_model_rows()

    agent = Unlisted(ROSTER)  # held: a card holds its observer weakly
    (_, switch_model) = Factory([ModelTool()], observer=agent).get_tools()
    with pytest.raises(RetriableError) as called:
        switch_model("mistral:large")
    assert str(called.value).endswith(". list_models lists the keys you can use.")
    agent = Unlisted(ROSTER)
    registry = Factory([ModelTool()], observer=agent).get_command_registry()
    with pytest.raises(RetriableError) as typed:
        registry.dispatch("/switch_model mistral:large")
    assert str(typed.value).endswith(". /list_models lists the keys you can use.")


def test_the_record_is_read_through_the_observer_every_call(roster: RosterAgent) -> None:
    (_, switch_model) = Factory([ModelTool()], observer=roster).get_tools()
    replaced = type(roster.state)()  # a restore replaces the state wholesale
    roster.state = replaced
    switch_model("anthropic:claude-x")
    assert replaced.tool_state.active_model == "anthropic:claude-x"


def test_switch_publishes_the_state_when_it_can() -> None:
    class Publishing(RosterAgent):
        def __init__(self) -> None:
            super().__init__(ROSTER)
            self.published: list[Any] = []
            self.state.observer(self)

        def notify_state_change(self, state: Any = None) -> None:
            self.published.append(state)

    agent = Publishing()
    (_, switch_model) = Factory([ModelTool()], observer=agent).get_tools()
    switch_model("anthropic:claude-x")
    assert agent.published == [agent.state]


# -- command grammar -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["/switch_model anthropic:claude-x", "/switch_model model=anthropic:claude-x"]
)
def test_switch_command_binds_positional_and_keyword(roster: RosterAgent, text: str) -> None:
    registry = Factory([ModelTool()], observer=roster).get_command_registry()
    assert registry.dispatch(text) == "Switched to anthropic:claude-x."
    assert roster.switched == ["anthropic:claude-x"]


def test_key_equals_binds_the_whole_token_and_fails_at_the_roster(roster: RosterAgent) -> None:
    registry = Factory([ModelTool()], observer=roster).get_command_registry()
    with pytest.raises(RetriableError, match="Cannot switch to 'key=openai:gpt-5.2'") as info:
        registry.dispatch("/switch_model key=openai:gpt-5.2")
    assert type(info.value) is RetriableError  # from the roster, not a CommandArgumentError
    assert roster.switched == ["key=openai:gpt-5.2"]  # reached the observer verbatim


def test_list_models_command_takes_no_argument(roster: RosterAgent) -> None:
    registry = Factory([ModelTool()], observer=roster).get_command_registry()
    assert registry.dispatch("/list_models").startswith(LISTING_HEADER)
    (listing,) = [d for d in registry.descriptors() if d.name == "list_models"]
    assert listing.args == []
    for text, problem in (
        ("/list_models anthropic:claude-x", "too many positional arguments"),
        ("/list_models model=anthropic:claude-x", r"unknown argument 'model' \(it takes none\)"),
    ):
        with pytest.raises(RetriableError, match=problem) as info:
            registry.dispatch(text)
        assert "Usage: /list_models" in str(info.value)
    assert roster.switched == []  # an argument never reaches the roster as a switch
    (descriptor,) = [d for d in registry.descriptors() if d.name == "switch_model"]
    assert [a.name for a in descriptor.args] == ["model"]


# -- LLM_CONTEXT ---------------------------------------------------------------------------


def test_provider_reads_the_roster_flag_never_the_persisted_slot(roster: RosterAgent) -> None:
    (provider,) = Factory([ModelTool()], observer=roster).get_context_states()
    roster.state.tool_state.active_model = "anthropic:claude-x"  # a stale preference
    assert provider() == ActiveModelState(key="openai:gpt-5.2", context_length=400000)


def test_active_model_state_renders_full_and_deltas() -> None:
    first = ActiveModelState(key="openai:gpt-5.2", context_length=400000)
    second = ActiveModelState(key="anthropic:claude-x")
    assert first.render_full() == "Model in force: openai:gpt-5.2 (context window 400000 tokens)."
    assert second.render_delta(first) == (
        "Model switched: openai:gpt-5.2 -> anthropic:claude-x (context window unknown)."
    )
    assert first.render_delta(first.model_copy()) is None
    resized = ActiveModelState(key="openai:gpt-5.2", context_length=1000)
    assert resized.render_delta(first) == "Model openai:gpt-5.2: context window 1000 tokens."


def test_switch_is_seen_by_the_context_updater_as_a_delta(roster: RosterAgent) -> None:
    factory = Factory([ModelTool()], observer=roster)
    updater = factory.get_context_updater()
    first = updater.compose_update([])
    assert first is not None and "Model in force: openai:gpt-5.2" in first
    (_, switch_model) = factory.get_tools()
    switch_model("anthropic:claude-x")
    second = updater.compose_update([first])
    assert second is not None and "openai:gpt-5.2 -> anthropic:claude-x" in second


def test_state_round_trips_as_a_baseline() -> None:
    state = ActiveModelState(key="openai:gpt-5.2", context_length=None)
    assert deserialize(serialize(state)) == state


# -- ModelRow: a projection ----------------------------------------------------------------


def test_model_row_context_length_is_required() -> None:
    with pytest.raises(ValidationError, match="context_length"):
        ModelRow(key="a:b", provider="a", model="b", active=True)  # type: ignore[call-arg]
    assert row("a:b").context_length is None  # None is fine when stated


def test_model_row_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="extra"):
        ModelRow(key="a:b", provider="a", model="b", context_length=1, active=True, x=1)  # type: ignore[call-arg]


# -- the observer contract -----------------------------------------------------------------


def test_roster_agent_satisfies_the_protocol(roster: RosterAgent) -> None:
    assert isinstance(roster, ModelSwitchToolObserver)
    assert isinstance(roster, ActorToolObserver)


@pytest.mark.parametrize("missing", ["list_model_rows", "switch_model"])
def test_a_missing_member_fails_the_protocol_check(missing: str) -> None:
    """The conformance guard, proven by removing one member (never the decorator)."""

    class Partial(FakeAgent):
        def list_model_rows(self) -> list[ModelRow]:
            return []

        def switch_model(self, key: str) -> str:
            return key

    delattr(Partial, missing)
    partial = Partial()
    assert isinstance(partial, ActorToolObserver)
    assert not isinstance(partial, ModelSwitchToolObserver)
    with pytest.raises(TypeError, match="ModelSwitchToolObserver"):
        Factory([ModelTool()], observer=partial)


def test_the_switch_needs_the_tool_state_slot() -> None:
    agent = RosterAgent(ROSTER)
    agent.state = object()
    with pytest.raises(TypeError, match="ToolState"):
        Factory([ModelTool()], observer=agent)
    Factory([ModelTool(switch_model=False)], observer=agent)  # the listing does not need it


def test_card_round_trips() -> None:
    card = ModelTool(switch_model=SwitchModel(expose={COMMAND}), active_model=False)
    back = deserialize(serialize(card))
    assert back == card and back.switch_model.expose == {COMMAND}
    assert ActiveModel().expose == {LLM_CONTEXT}


# -- in a toolset ------------------------------------------------------------------------------


def offered(group: Any) -> list[str]:
    """The tool names a model is given for ``group`` (a ToolGroup), as pydantic-ai lists them."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(tool.name for tool in info.function_tools)
        return ModelResponse(parts=[TextPart("done")])

    Agent(FunctionModel(model), toolsets=[group]).run_sync("go")
    return seen


def test_in_a_toolset_its_texts_name_its_tools_as_the_model_calls_them() -> None:
    """Grouped in set ``models``, the tools reach the model as ``models_list_models`` and
    ``models_switch_model``: the docstrings and the refused switch's advice say those names
    (a person's commands keep theirs)."""
    from pydantic_ai import ModelRetry

    from akgentic.tool.toolsets import ToolsetCard

    class Unlisted(RosterAgent):
        def list_model_rows(self) -> list[ModelRow]:
            raise RuntimeError("roster gone")

    agent = Unlisted(ROSTER)
    card = ToolsetCard(name="models", description="Pick a model", cards=[ModelTool()])
    factory = Factory([card], observer=agent)
    [group] = factory.get_toolsets()
    assert offered(group) == ["models_list_models", "models_switch_model"]
    list_models, switch_model = card.members().get_tools()
    assert (list_models.__doc__ or "").endswith("to models_switch_model.")
    assert "exactly as models_list_models shows it" in (switch_model.__doc__ or "")
    with pytest.raises(ModelRetry) as called:
        switch_model("mistral:large")
    assert str(called.value).endswith(". models_list_models lists the keys you can use.")
    with pytest.raises(RetriableError) as typed:
        factory.get_command_registry().dispatch("/switch_model mistral:large")
    assert str(typed.value).endswith(". /list_models lists the keys you can use.")
