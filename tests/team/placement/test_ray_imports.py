"""What a team's Ray actor imports before its team starts: the operator's modules
(``RayOptions.imports``, from ``akgentic serve --import``) and its card's, those this
process imported only (no cluster needed: the actor class is a recording fake)."""

from __future__ import annotations

import csv
import decimal
import json
from typing import Any
from uuid import uuid4

import pytest

from tests.team.placement.cards import gate_card
from tests.team.placement.conftest import HAS_RAY

pytestmark = pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]'")

NOT_IMPORTED = "akgentic_never_imported_here"
"""A module this process never imported: it does not vouch for it."""
OPERATOR = (json.__name__, NOT_IMPORTED, csv.__name__)
CARD = [csv.__name__, decimal.__name__, NOT_IMPORTED]
WANTED = ["json", "csv", "decimal"]  # the operator's first, once each, imported here only


def test_an_actor_imports_the_operators_modules_then_its_cards() -> None:
    from akgentic.team.placement.ray import RayOptions
    from akgentic.team.placement.ray.placement import host_imports

    card = gate_card().model_copy(update={"imports": CARD})
    assert host_imports(RayOptions(imports=OPERATOR), card) == WANTED
    assert host_imports(RayOptions(), card) == ["csv", "decimal"]


class Recorder:
    """Stands for ``ray.remote(TeamHost)``: records what an actor would be started with."""

    def __init__(self) -> None:
        self.args: tuple[Any, ...] = ()

    def options(self, **_: Any) -> Recorder:
        return self

    def remote(self, *args: Any) -> object:
        self.args = args
        return object()


def test_the_actor_a_placement_starts_is_handed_those_modules() -> None:
    from akgentic.team.placement.ray import RayOptions, RayPlacement

    placement = RayPlacement.__new__(RayPlacement)  # no store, no cluster: _spawn only
    placement.options = RayOptions(imports=OPERATOR)
    placement.storage_url = "postgresql://nobody@127.0.0.1:1/none"
    placement._host_class = recorder = Recorder()
    card = gate_card().model_copy(update={"imports": CARD})
    placement._spawn(uuid4(), "team-x", card, None)
    _, _, name, imports, _, _ = recorder.args
    assert (name, imports) == ("team-x", WANTED)
