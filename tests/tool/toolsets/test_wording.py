"""The catalog and the active-set context state, as the model reads them."""

from __future__ import annotations

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool.toolsets import CATALOG_HEADER, ActiveToolsets, render_catalog
from akgentic.tool.toolsets.wording import tool_signature


def test_the_catalog_renders_every_set_alike_one_line_each() -> None:
    catalog = render_catalog([("media", "Films"), ("web", "Pages")])
    assert catalog == f"{CATALOG_HEADER}\nmedia — Films\nweb — Pages"
    assert "ACTIVE" not in catalog and "INACTIVE" not in catalog
    assert render_catalog([]) == ""


def test_active_toolsets_render_full_and_deltas() -> None:
    none, media, both = (
        ActiveToolsets(),
        ActiveToolsets(names=["media"]),
        ActiveToolsets(names=["media", "web"]),
    )
    assert none.render_full() == ""
    assert media.render_full() == "Active toolsets: media. Their tools are in your tool list."
    assert both.render_delta(both) is None
    assert both.render_delta(media) == "Active toolsets now: media, web."
    assert none.render_delta(media) == (
        "No longer active: media (disabled, idle for 10 minutes, or the conversation "
        "restarted); enable_toolset brings a set back. Active toolsets now: none."
    )


def test_active_toolsets_round_trip_as_a_persisted_baseline() -> None:
    state = ActiveToolsets(names=["web"])
    assert deserialize(serialize(state)) == state


def test_tool_signatures_mark_optional_parameters() -> None:
    schema = {"properties": {"q": {}, "limit": {}}, "required": ["q"]}
    assert tool_signature("media_search", schema) == "media_search(q, limit?)"
    assert tool_signature("media_stop", {}) == "media_stop()"
