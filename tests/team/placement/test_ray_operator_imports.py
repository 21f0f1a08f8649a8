"""The operator's modules on a real cluster: a card class defined in a module that
``RayOptions.imports`` names (``akgentic serve --import MODULE``) is usable by the team's
Ray actor, which imports the module before decoding the card; without it the actor cannot
read the card, and says so with the error a process of its own would raise."""

from __future__ import annotations

import sys

import pytest

from akgentic.core.serialization import SerializationError
from tests.team.placement import operator_cards
from tests.team.placement.conftest import Deployment, needs_cluster, tool_called, wait_answer

pytestmark = needs_cluster

MODULE = operator_cards.__name__


def test_a_card_class_of_an_operators_module_runs_on_the_teams_actor(
    deployment: Deployment,
) -> None:
    import ray

    card = operator_cards.operator_card()
    assert card.imports == [] and MODULE in sys.modules  # the placing process vouches for it

    with pytest.raises(SerializationError, match=MODULE) as unread:
        deployment.manager().create_team(card)
    assert type(unread.value) is SerializationError  # as a worker without the module says

    team = deployment.manager(imports=(MODULE,)).create_team(card)
    team.send("hello operator")
    wait_answer(deployment.storage, team.team_id, "[scripted] done: hello operator", 60)
    assert tool_called(deployment.storage, team.team_id, "hello operator")
    imported = ray.get(team._host().__ray_call__.remote(lambda host: MODULE in sys.modules))
    assert imported is True  # by the actor's worker process, before it read the card
