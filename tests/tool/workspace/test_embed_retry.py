"""A search retries the embeddings a failed one left missing (the tree's actor is told)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from akgentic.tool.vector_store import STORE_ACTOR_NAME, VectorStoreActor
from akgentic.tool.workspace import WORKSPACE_COLLECTION, WorkspaceTool

from ..conftest import Team
from ..members import install_embedder
from .conftest import (
    CONCEPTS,
    ConceptEmbedder,
    add_member,
    card_of,
    eventually,
    tool_address,
    tools_of,
)


class DownOnce(ConceptEmbedder):
    """Fails its first call (the endpoint was down), then embeds."""

    def __init__(self, concepts: dict[str, tuple[str, ...]]) -> None:
        super().__init__(concepts)
        self.calls = 0

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        self.calls += 1  # one worker at a time here: the first write's, then the search's
        if self.calls == 1:
            raise RuntimeError("the embeddings endpoint is down")
        return super().embed(texts, timeout)


def test_a_search_embeds_what_a_failed_embedding_left_missing(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = install_embedder(monkeypatch, CONCEPTS, DownOnce)
    assert isinstance(embedder, DownOnce)
    member = add_member(team, "@Author", WorkspaceTool())
    tools = tools_of(team, member)
    address = card_of(team, member)._actor
    assert address is not None
    actor = team.system.get_actor(address)
    eventually(lambda: actor._since_pass is None)  # the start pass over the empty tree ended
    tools["workspace_write"]("pets.md", "Our kitten eats cat food.\n")
    eventually(lambda: actor._retry_at is not None)  # its embedding failed, and was told
    store = team.system.proxy_ask(
        tool_address(team, STORE_ACTOR_NAME), VectorStoreActor, timeout=30
    )
    assert store.count(WORKSPACE_COLLECTION, "") == 0

    tools["workspace_search"]("feline pets")  # tells the tree's actor to catch up
    eventually(lambda: store.count(WORKSPACE_COLLECTION, "") == 1)
