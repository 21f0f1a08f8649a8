"""A tool card class that no team card lists under ``imports``: the operator names its
module instead (``akgentic serve --import``, ``RayOptions.imports``), and the Ray actor
hosting a team imports it from there."""

from __future__ import annotations

from akgentic.team import TeamCard
from tests.team.placement.cards import Gate, gate_card


class OperatorGate(Gate):
    """The placement tests' gate, as a class of the operator's module."""


def operator_card() -> TeamCard:
    """The gate team with an :class:`OperatorGate` and no ``imports`` of its own."""
    card = gate_card("operator")
    spec = card.members[0]
    config = spec.card.config.model_copy(update={"tools": [OperatorGate()]})
    member = spec.model_copy(update={"card": spec.card.model_copy(update={"config": config})})
    return card.model_copy(update={"members": [member], "imports": []})
