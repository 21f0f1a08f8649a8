"""ToolsetRegistry: seed 000's response table, the 10-minute timeout from last use with an
injected clock, lazy cleanup, and one registry per conversation."""

from __future__ import annotations

import pytest

from akgentic.tool.core import RetriableError
from akgentic.tool.toolsets import TOOLSET_TIMEOUT, ToolsetRegistry


class FakeClock:
    """Seconds that move only when the test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry(clock: FakeClock) -> ToolsetRegistry:
    return ToolsetRegistry(["media", "web"], clock=clock)


# -- the response table, row by row --
def test_enable_an_inactive_set(registry: ToolsetRegistry) -> None:
    assert registry.enable("media") == "Toolset 'media' activated."
    assert registry.active() == {"media"}


def test_enable_an_active_set_extends_its_timeout(
    registry: ToolsetRegistry, clock: FakeClock
) -> None:
    registry.enable("media")
    clock.advance(TOOLSET_TIMEOUT - 1)
    assert registry.enable("media") == "Toolset 'media' is already active; its timeout is extended."
    clock.advance(TOOLSET_TIMEOUT - 1)  # past the first deadline, inside the extended one
    assert registry.active() == {"media"}


def test_enable_an_unknown_set_lists_the_available_ones(registry: ToolsetRegistry) -> None:
    answer = registry.enable("films")
    assert answer == "There is no toolset 'films'. Available toolsets: media, web."
    assert registry.active() == frozenset()


def test_disable_an_active_set(registry: ToolsetRegistry) -> None:
    registry.enable("web")
    assert registry.disable("web") == "Toolset 'web' deactivated."
    assert registry.active() == frozenset()


def test_disable_an_inactive_set_is_not_an_error(registry: ToolsetRegistry) -> None:
    assert registry.disable("web") == "Toolset 'web' deactivated (it was not active)."
    assert registry.disable("web") == "Toolset 'web' deactivated (it was not active)."


def test_disable_an_unknown_set_lists_the_available_ones(registry: ToolsetRegistry) -> None:
    assert registry.disable("nope") == "There is no toolset 'nope'. Available toolsets: media, web."


@pytest.mark.parametrize("method", ["enable", "disable"])
@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_name_is_a_retriable_error_naming_the_sets(
    registry: ToolsetRegistry, method: str, name: str
) -> None:
    with pytest.raises(RetriableError, match=r"needs the name of a toolset: one of media, web"):
        getattr(registry, method)(name)


def test_names_are_read_stripped(registry: ToolsetRegistry) -> None:
    assert registry.enable("  media ") == "Toolset 'media' activated."


# -- the timeout --
def test_a_set_expires_exactly_ten_minutes_after_its_last_use(
    registry: ToolsetRegistry, clock: FakeClock
) -> None:
    registry.enable("media")
    clock.advance(TOOLSET_TIMEOUT - 0.001)
    assert registry.is_active("media")
    clock.advance(0.001)
    assert not registry.is_active("media")


def test_a_use_extends_the_timeout_and_an_expired_set_is_gone_for_good(
    registry: ToolsetRegistry, clock: FakeClock
) -> None:
    registry.enable("media")
    clock.advance(540)
    assert registry.use("media") is False  # already active: extended, not auto-activated
    clock.advance(540)  # 18 minutes after enable, 9 after the use
    assert registry.active() == {"media"}
    clock.advance(60)
    assert registry.active() == frozenset()
    assert registry.disable("media") == "Toolset 'media' deactivated (it was not active)."


def test_a_use_of_an_inactive_set_activates_it(registry: ToolsetRegistry) -> None:
    assert registry.use("web") is True
    assert registry.active() == {"web"}
    assert registry.use("unknown") is False
    assert registry.active() == {"web"}


def test_cleanup_is_lazy_no_timer_runs(registry: ToolsetRegistry, clock: FakeClock) -> None:
    registry.enable("media")
    clock.advance(TOOLSET_TIMEOUT * 3)
    assert "media" in registry._deadlines  # nothing removed it while nobody read
    assert registry.active() == frozenset()
    assert registry._deadlines == {}  # the read cleaned it


def test_reset_forgets_every_activation(registry: ToolsetRegistry) -> None:
    registry.enable("media")
    registry.enable("web")
    registry.reset()
    assert registry.active() == frozenset()


def test_two_conversations_never_share_activations(clock: FakeClock) -> None:
    first, second = ToolsetRegistry(["media"], clock=clock), ToolsetRegistry(["media"], clock=clock)
    first.enable("media")
    assert first.active() == {"media"} and second.active() == frozenset()


def test_a_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        ToolsetRegistry(["media"], timeout=0)
