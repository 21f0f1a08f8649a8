"""What a cluster backend says when a collection's fixed dimension stands in the way.

Qdrant and Weaviate fix a collection's vector dimension; a new one means re-creating the
collection, which drops every row in it. A collection shared by several teams (or
tenants) is therefore never re-created for one of them: the one whose embedding model
changed is told, in one line, to give itself its own collection — the other teams' rows
stay, and no team's start re-creates the collection under another team's feet. A
deployment moving every team to the new model deletes the collection once instead (each
team's next start embeds its own rows again): whether the others move too is the
operator's to say, never one team's to guess. Each refusal is a
:class:`VectorStoreConfigError`: a deployment choice to change, not a fault of the moment.
"""

from __future__ import annotations

from akgentic.core.words import counted
from akgentic.tool.vector_store.protocol import VectorStoreConfigError

__all__ = ["other_dimension", "shared_collection"]


def shared_collection(
    cluster: str, name: str, others: int, held: int, dimension: int
) -> VectorStoreConfigError:
    """The refusal to re-create ``name`` for ``dimension`` while ``others`` rows of other
    teams or tenants, of ``held`` dimensions, live in it."""
    return VectorStoreConfigError(
        f"the {cluster} collection {name} holds {counted(others, 'row')} of other teams "
        f"(or tenants) in {held} dimensions, and this team's embedding model makes "
        f"{dimension}: it is not re-created for one team, as that would drop theirs. Give "
        f"this team its own collection (vector_store: {{collection: <a name of its own>}} "
        f"in its card), embed with the model those teams use, or — every team moving to "
        f"this model — delete {name} once: each team's next start embeds its rows again"
    )


def other_dimension(cluster: str, name: str, held: int, dimension: int) -> VectorStoreConfigError:
    """The refusal of a write of ``dimension`` into ``name``, which holds ``held``."""
    return VectorStoreConfigError(
        f"the {cluster} collection {name} holds vectors of {held} dimensions, and this "
        f"embedding model makes {dimension}: give this team its own collection "
        f"(vector_store: {{collection: <a name of its own>}} in its card), embed with a "
        f"model of {held} dimensions, or — every team moving to this model — delete {name} "
        f"once: each team's next start embeds its rows again"
    )
