"""TallyTool: a card of your own on all four channels, backed by a ``#`` tool actor.

The worked example of docs/custom-cards.md. The team shares one tally board:

- TOOL_CALL ``tally_add(name, amount=1)`` — the model counts something;
- SYSTEM_PROMPT ``tally_rules`` — static text, rendered once into the cached prefix;
- LLM_CONTEXT ``tally_board`` — the board as a ContextState: in full on the first turn,
  then only what changed, at the tail of each turn's request;
- COMMAND ``/tally_reset name`` — a person removes a tally, without the model.

The board lives in ``#Tally``, one actor per team (get-or-create, never
check-then-create). Its state is a DeltaState: every change is emitted as a
``ToolStateEvent`` before the caller hears back, and a resumed team folds those deltas
back into the same board; so does a client that replays the log
(``TeamRuntime.tool_state("#Tally")``), from the board's last snapshot, with no reducer to
register.

Run it offline, from this folder (so Python finds this module):
``akgentic run tally.yaml -m "count apples"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self

from pydantic import ConfigDict, Field, PrivateAttr

from akgentic.core import ActorAddress, Akgent, BaseConfig
from akgentic.core.serialization import SerializableModel
from akgentic.tool import BaseToolParam, ContextState, RetriableError, ToolCard, ToolObserver
from akgentic.tool.core import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    Channels,
    DeltaState,
    StateJournal,
    ask_tool_actor,
    bind_team_actor,
    require_team_observer,
    serve,
)

TALLY = "#Tally"
"""The tool actor's name: ``#`` makes the teardown stop it after the agents that call it."""
ASK_TIMEOUT = 10.0


# -- the tool actor: team state, persisted as its deltas ------------------------------------
class TallyDelta(SerializableModel):
    """One change to the board: the new value of each changed tally, and the removed ones."""

    changed: dict[str, int] = Field(default_factory=dict)
    removed: list[str] = Field(default_factory=list)


class TallyState(DeltaState):
    """The board. ``apply_delta`` is the one rule by which a delta changes it (restore and
    replay use it too, so they rebuild exactly what the actor held)."""

    counts: dict[str, int] = Field(default_factory=dict)

    def apply_delta(self, delta: Any) -> None:
        if not isinstance(delta, TallyDelta):
            raise ValueError(f"a TallyState applies TallyDelta, not {type(delta).__name__}")
        self.counts.update(delta.changed)
        for name in delta.removed:
            self.counts.pop(name, None)


class TallyActor(Akgent[BaseConfig, TallyState]):
    """``#Tally``: one per team. One message at a time, so no locks."""

    def on_start(self) -> None:
        self._journal = StateJournal(self)  # continues the seq of a restored state

    def add(self, name: str, amount: int) -> int:
        """Add ``amount`` to ``name``; the new value. The delta is emitted before return."""
        self._apply(TallyDelta(changed={name: self.state.counts.get(name, 0) + amount}))
        return self.state.counts[name]

    def reset(self, name: str) -> bool:
        """Remove ``name``; False when there was no such tally (nothing is emitted)."""
        if name not in self.state.counts:
            return False
        self._apply(TallyDelta(removed=[name]))
        return True

    def counts(self) -> dict[str, int]:
        return dict(self.state.counts)

    def _apply(self, delta: TallyDelta) -> None:
        self.state.apply_delta(delta)
        self._journal.record(delta)

    def on_stop(self) -> None:
        self._journal.close()


# -- the LLM_CONTEXT state: a frozen snapshot, rendered in full or as a delta ---------------
class TallyBoard(ContextState):
    """What the model sees of the board on a turn. Frozen: it may become the baseline."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    counts: tuple[tuple[str, int], ...] = ()

    def render_full(self) -> str:
        if not self.counts:
            return ""
        return "Tally board:\n" + "\n".join(f"- {name}: {n}" for name, n in self.counts)

    def render_delta(self, previous: TallyBoard) -> str | None:
        before, now = dict(previous.counts), dict(self.counts)
        lines = [f"- {name}: {n}" for name, n in self.counts if before.get(name) != n]
        lines += [f"- {name}: removed" for name in before if name not in now]
        return "Tally board, changes:\n" + "\n".join(lines) if lines else None


# -- the card: configuration only; one param per capability --------------------------------
class TallyAdd(BaseToolParam):
    """``tally_add(name, amount=1)``."""

    expose: set[Channels] = {TOOL_CALL}


class TallyRules(BaseToolParam):
    """The board's rules, in the frozen system prompt."""

    expose: set[Channels] = {SYSTEM_PROMPT}


class TallyView(BaseToolParam):
    """The board, per turn, as a delta."""

    expose: set[Channels] = {LLM_CONTEXT}


class TallyReset(BaseToolParam):
    """``/tally_reset name``."""

    expose: set[Channels] = {COMMAND}


class TallyTool(ToolCard):
    """A team-wide tally board. ``max_amount`` caps one ``tally_add``."""

    max_amount: int = Field(default=100, ge=1)
    tally_add: TallyAdd | bool = True
    tally_rules: TallyRules | bool = True
    tally_board: TallyView | bool = True
    tally_reset: TallyReset | bool = True

    _address: ActorAddress | None = PrivateAttr(default=None)

    def observer(self, observer: ToolObserver) -> Self:
        """Bind the team's ``#Tally`` (get-or-create in one step) when the agent wires us."""
        super().observer(observer)
        team = require_team_observer(observer, "TallyTool", TALLY)
        self._address = bind_team_actor(team, TallyActor, BaseConfig(name=TALLY), ASK_TIMEOUT)
        return self

    def _ask(self, what: str, call: Callable[[TallyActor], Any]) -> Any:
        """``call`` on ``#Tally``; every failure becomes a RetriableError for the model."""
        team = require_team_observer(self.get_observer(), "TallyTool", TALLY)
        if self._address is None:
            raise RuntimeError("TallyTool is not wired: build it through ToolFactory")
        return ask_tool_actor(
            team, self._address, TallyActor, call, what=what, label="The tally board (#Tally)",
            timeout=ASK_TIMEOUT,
        )  # fmt: skip

    def get_tools(self) -> list[Callable[..., Any]]:
        if serve(self.tally_add, TallyAdd, TOOL_CALL) is None:
            return []
        card = self

        def tally_add(name: str, amount: int = 1) -> str:
            """Add ``amount`` (default 1) to the team's tally ``name``; returns its new value."""
            if not name.strip():
                raise RetriableError("name must not be empty: say what you are counting")
            if amount == 0 or abs(amount) > card.max_amount:
                raise RetriableError(f"amount must be between 1 and {card.max_amount} in size")
            value = card._ask("tally_add", lambda actor: actor.add(name.strip(), amount))
            return f"{name.strip()} is now {value}"

        return [tally_add]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        if serve(self.tally_rules, TallyRules, SYSTEM_PROMPT) is None:
            return []

        def tally_rules() -> str:
            return "The team keeps a tally board: count things with tally_add."

        return [tally_rules]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        if serve(self.tally_board, TallyView, LLM_CONTEXT) is None:
            return []
        card = self

        def tally_board() -> ContextState | None:
            """The board now, or None when #Tally cannot be read. Never raises."""
            try:
                counts: dict[str, int] = card._ask("tally_board", lambda actor: actor.counts())
            except Exception:
                return None
            return TallyBoard(counts=tuple(sorted(counts.items())))

        return [tally_board]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        if serve(self.tally_reset, TallyReset, COMMAND) is None:
            return {}
        card = self

        def tally_reset(name: str) -> str:
            """Remove the tally ``name`` from the board."""
            done: bool = card._ask("tally_reset", lambda actor: actor.reset(name))
            return f"Removed the tally {name}." if done else f"There is no tally named {name}."

        return {TallyReset: tally_reset}
