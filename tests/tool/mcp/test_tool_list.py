"""A server's tool list fits a model: names no provider accepts are left out and said once,
so are a name's later tools, the tools whose schema no model can use, the tools the client
refuses and the tools past ``max_tools``; a huge description is cut, a list that is not
valid MCP as a whole is a failed server said as such."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ExternalToolset
from pydantic_ai.usage import RunUsage

from akgentic.core.excerpt import validation_words
from akgentic.tool.mcp import MCPStdioConnectionConfig, MCPTool
from akgentic.tool.mcp import toolset as toolset_module
from akgentic.tool.mcp.toolset import DEFAULT_MAX_TOOLS, MAX_DESCRIPTION_CHARS, MCPServerToolset

from .conftest import raw, raw_http, stdio

SCHEMA = {"type": "object", "properties": {}}


def listed(
    tmp_path: Path, tools: list[Any] | str | dict[str, Any], **fields: Any
) -> tuple[dict[str, str], list[str], str | None]:
    """What the agent is offered of a server that lists ``tools`` (name: description, over
    two steps of one turn), the lines said on the team stream, and the toolset's failure."""
    return listed_by(raw(tmp_path, tools, **fields))


def tools_named(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "inputSchema": SCHEMA} for n in names]


def listed_by(card: MCPTool) -> tuple[dict[str, str], list[str], str | None]:
    """:func:`listed`, of the server ``card`` names."""
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    lines: list[str] = []

    async def run() -> tuple[dict[str, str], str | None]:
        [toolset] = card.get_toolsets()
        toolset.on_unavailable = lambda server, line: lines.append(line)
        async with toolset:
            await toolset.get_tools(ctx)
            offered = await toolset.get_tools(ctx)
            return {n: t.tool_def.description or "" for n, t in offered.items()}, toolset.failure

    offered, failure = anyio.run(run)
    return offered, lines, failure


def test_names_no_model_accepts_are_left_out_and_said_once(tmp_path: Path) -> None:
    names = ["fine-name_1", "with space", "a.b", "ünï", "x" * 70]
    offered, lines, failure = listed(tmp_path, [{"name": n, "inputSchema": SCHEMA} for n in names])
    assert set(offered) == {"raw__fine-name_1"} and failure is None
    [line] = lines
    assert line.startswith("MCP server 'raw' (") and " serves 4 tools whose names no model " in line
    assert "'raw__a.b'" in line and "'raw__with space'" in line
    assert line.endswith("Rename them on the server or shorten the card's tool_prefix.")


def test_a_megabyte_description_is_cut_with_a_note(tmp_path: Path) -> None:
    huge = {"name": "big", "description": "D" * 1_000_000, "inputSchema": SCHEMA}
    offered, lines, _ = listed(
        tmp_path, [huge, {"name": "small", "description": "s", "inputSchema": SCHEMA}]
    )
    assert offered["raw__small"] == "s" and lines == []
    said = offered["raw__big"]
    assert said.startswith("D" * MAX_DESCRIPTION_CHARS) and len(said) < MAX_DESCRIPTION_CHARS + 200
    assert "the server's description was longer" in said


def test_a_tool_list_that_is_not_valid_mcp_is_a_failed_server_not_a_stopped_one(
    tmp_path: Path,
) -> None:
    """It was said as "stopped: 1 validation error for ListToolsResult" and started again,
    to fail the same way: the server is alive, and its list is what is wrong — as a whole
    (``tools`` is no list), so no tool of it can be read."""
    offered, lines, failure = listed(tmp_path, "not a list")
    assert offered == {}
    assert failure is not None and failure.startswith("its tool list is not valid MCP")
    [line] = lines
    assert "sent a tool list that is not valid MCP (ListToolsResult: tools: " in line
    assert line.endswith("The agent goes on without its tools; fix the server.")


def test_a_tool_the_client_refuses_is_left_out_and_the_server_s_other_tools_are_offered(
    tmp_path: Path,
) -> None:
    """The ``mcp`` 2.x client refuses a whole list over one tool out of shape (a schema
    whose root type is not "object", a field of the wrong kind): each is left out on its
    own, said with what is wrong, and the others are offered, in the server's order."""
    offered, lines, failure = listed(
        tmp_path,
        [
            {"name": "first", "description": "1", "inputSchema": SCHEMA},
            {"name": "text", "inputSchema": {"type": "string"}},
            {"name": "scalar", "inputSchema": "not a schema"},
            {"name": "bare"},
            {"name": "annotated", "inputSchema": SCHEMA, "annotations": 5},
            {"name": "last", "description": "2", "inputSchema": SCHEMA},
        ],
    )
    assert offered == {"raw__first": "1", "raw__last": "2"} and failure is None
    schema, invalid = lines
    assert schema.startswith("MCP server 'raw' (")
    assert schema.endswith(
        " serves 2 tools whose input schema no model can use ('scalar': it is str, not a JSON "
        "object; 'text': its type is 'string', not 'object'); they are left out. Fix their "
        "inputSchema on the server: a JSON Schema of type 'object'."
    )
    assert invalid.startswith("MCP server 'raw' (")
    assert invalid.endswith(
        " lists 2 tools that are not valid MCP ('annotated': annotations: Input should be a "
        "valid dictionary or instance of ToolAnnotations; 'bare': inputSchema: Field "
        "required); they are left out and its other tools are offered. Fix them on the server."
    )


def test_over_http_too_a_refused_tool_leaves_the_others(tmp_path: Path) -> None:
    """Every transport builds its sessions alike: over streamable HTTP as over stdio."""
    listing = tools_named("a", "b")
    listing.insert(1, {"name": "bad", "inputSchema": {"type": "string"}})
    with raw_http(tmp_path, listing) as card:
        offered, lines, failure = listed_by(card)
    assert list(offered) == ["raw__a", "raw__b"] and failure is None
    [line] = lines
    assert line.startswith("MCP server 'raw' (http://127.0.0.1:")
    assert " whose input schema no model can use ('bad': its type is 'string', not " in line


def test_an_mcp_server_that_refuses_its_own_list_is_said_to_answer_an_error() -> None:
    """The ``mcp`` 2.x server checks what it sends: a list holding one tool out of shape is
    an error in its place, so no client can keep the others. Said as such — it was said
    as "stopped", though the server runs."""
    script = Path(__file__).with_name("lowlevel_server.py")
    card = MCPTool(
        name="low",
        connection=MCPStdioConnectionConfig(stdio_command=sys.executable, stdio_args=[str(script)]),
    )
    offered, lines, failure = listed_by(card)
    assert offered == {} and failure is None
    [line] = lines
    assert line.startswith("MCP server 'low' (")
    assert line.endswith(
        ") answered its tool list with an error: Handler returned an invalid result. It will "
        "be started again at the agent's next turn."
    )


def test_a_list_in_pages_says_the_refused_tools_of_every_page(tmp_path: Path) -> None:
    """Each page is checked as it comes; the tools refused on the first are still said
    once the last has come."""
    pages = [
        [{"name": "a", "inputSchema": SCHEMA}, {"name": "p1", "inputSchema": {"type": "null"}}],
        [{"name": "p2", "inputSchema": {"type": "string"}}, {"name": "b", "inputSchema": SCHEMA}],
    ]
    offered, lines, failure = listed(tmp_path, {"pages": pages})
    assert list(offered) == ["raw__a", "raw__b"] and failure is None
    [line] = lines
    assert "('p1': its type is 'null', not 'object'; 'p2': its type is 'string', not" in line


def test_a_tool_the_client_refuses_takes_no_place_under_max_tools(tmp_path: Path) -> None:
    tools: list[Any] = [{"name": "bad", "inputSchema": {"type": "array"}}]
    tools += [{"name": f"t{i}", "inputSchema": SCHEMA} for i in range(3)]
    offered, lines, _ = listed(tmp_path, tools, max_tools=2)
    assert list(offered) == ["raw__t0", "raw__t1"]
    schema, past = lines
    assert "('bad': its type is 'array', not 'object')" in schema
    assert " offers 3 tools a model can use, more than its card's max_tools (2): " in past


def test_a_name_listed_twice_keeps_its_first_tool_and_says_the_later_is_left_out(
    tmp_path: Path,
) -> None:
    """pydantic-ai's ``MCPToolset`` keeps the last of two tools with one name, silently."""
    later = {"type": "object", "properties": {"x": {"type": "string"}}}
    offered, lines, failure = listed(
        tmp_path,
        [
            {"name": "echo", "description": "the first", "inputSchema": SCHEMA},
            {"name": "other", "description": "o", "inputSchema": SCHEMA},
            {"name": "echo", "description": "the second", "inputSchema": later},
        ],
    )
    assert offered == {"raw__echo": "the first", "raw__other": "o"} and failure is None
    [line] = lines
    assert line.startswith("MCP server 'raw' (")
    assert " lists 1 tool name more than once ('echo'); the first tool of each name is " in line
    assert line.endswith("the later ones are left out. Give each tool its own name on the server.")


def test_a_server_listing_ten_thousand_tools_offers_the_first_128_and_says_the_rest(
    tmp_path: Path,
) -> None:
    tools = [{"name": f"t{i}", "inputSchema": SCHEMA} for i in range(10_000)]
    offered, lines, failure = listed(tmp_path, tools)
    assert DEFAULT_MAX_TOOLS == 128 and failure is None
    assert list(offered) == [f"raw__t{i}" for i in range(128)]  # the server's order
    [line] = lines
    assert line.startswith("MCP server 'raw' (")
    assert line.endswith(
        " offers 10,000 tools a model can use, more than its card's max_tools (128): the first "
        "128 in the server's order are offered and the other 9,872 left out. Raise max_tools "
        "on its MCPTool card to offer more."
    )


def test_max_tools_counts_the_tools_a_model_can_be_offered(tmp_path: Path) -> None:
    """A name no model accepts takes no place: the cap is of tools the agent could call."""
    names = ["a", "b c", "d", "e", "f"]
    tools = [{"name": n, "inputSchema": SCHEMA} for n in names]
    offered, lines, _ = listed(tmp_path, tools, max_tools=2)
    assert list(offered) == ["raw__a", "raw__d"]
    unnamed, past = lines
    assert "'raw__b c'" in unnamed
    assert " offers 4 tools a model can use, more than its card's max_tools (2): " in past
    assert " the other 2 left out. " in past


def test_a_server_within_max_tools_is_offered_whole_and_nothing_is_said(tmp_path: Path) -> None:
    tools = [{"name": f"t{i}", "inputSchema": SCHEMA} for i in range(3)]
    offered, lines, _ = listed(tmp_path, tools, max_tools=3)
    assert len(offered) == 3 and lines == []


@pytest.mark.parametrize("value", [0, -1])
def test_max_tools_below_one_is_refused_saying_what_it_is(value: int) -> None:
    with pytest.raises(ValidationError) as refused:
        MCPTool(connection=stdio(), max_tools=value)
    assert validation_words(refused.value) == (
        f"max_tools: {value} offers no tool: max_tools is how many of the server's tools the "
        f"agent is offered, at least 1 (to offer none, leave the MCPTool card out)"
    )


def test_a_schema_that_is_not_valid_json_schema_is_left_out_saying_where_and_why(
    tmp_path: Path,
) -> None:
    """The mcp client checks a schema's root only; a provider checks the whole and refuses
    every request of the agent over one bad schema. Each schema is read under its own
    ``$schema`` (draft-04's boolean exclusiveMinimum is fine there)."""
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"x": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    offered, lines, failure = listed(
        tmp_path,
        [
            {
                "name": "typo",
                "inputSchema": {"type": "object", "properties": {"x": {"type": "strin"}}},
            },
            {"name": "fine", "inputSchema": {"type": "object", "required": ["x"]}},
            {"name": "loose", "inputSchema": {"type": "object", "additionalProperties": 5}},
            {"name": "old", "inputSchema": draft4},
        ],
    )
    assert list(offered) == ["raw__fine", "raw__old"] and failure is None
    [line] = lines
    assert line.startswith("MCP server 'raw' (")
    assert line.endswith(
        " serves 2 tools whose input schema no model can use ('loose': not valid JSON Schema "
        "at additionalProperties: 5 is not of type 'object', 'boolean'; 'typo': not valid JSON "
        "Schema at properties.x.type: 'strin' is not valid under any of the given schemas); "
        "they are left out. Fix their inputSchema on the server: a JSON Schema of type 'object'."
    )


def through_a_lenient_client(
    schemas: dict[str, Any], max_tools: int = DEFAULT_MAX_TOOLS
) -> tuple[list[str], list[str]]:
    """What the agent is offered (over two steps), and the lines said, of a server whose
    client hands on any schema as it came — as the ``mcp`` 1.x client does (its
    ``inputSchema`` is any object; 2.x refuses a root that is not of type object, tool by
    tool here, as tested above)."""
    defs = [ToolDefinition(name=n, parameters_json_schema=s) for n, s in schemas.items()]
    lines: list[str] = []
    toolset = MCPServerToolset(
        server="old",
        connection=MCPStdioConnectionConfig(stdio_command="old-server"),
        build=lambda: ExternalToolset(defs),
        prefix="old_",
        on_unavailable=lambda server, line: lines.append(line),
        max_tools=max_tools,
    )
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def run() -> list[str]:
        async with toolset:
            await toolset.get_tools(ctx)
            return list(await toolset.get_tools(ctx))

    return anyio.run(run), lines


def test_a_schema_whose_root_is_no_object_is_left_out_and_takes_no_place_under_max_tools() -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(5_000):  # past Python's recursion limit: cannot be checked, nor sent
        deep = {"type": "object", "properties": {"x": deep}}
    offered, lines = through_a_lenient_client(
        {
            "text": {"type": "string"},
            "untyped": {"properties": {}},
            "either": {"type": ["object", "null"]},
            "listed": [{"type": "object"}],
            "deep": deep,
            "fine": {"type": "object", "properties": {}},
        },
        max_tools=1,
    )
    assert offered == ["old__fine"]
    [line] = lines  # and no line about max_tools: the one usable tool is within it
    assert line == (
        "MCP server 'old' (old-server) serves 5 tools whose input schema no model can use "
        "('deep': it cannot be checked (RecursionError); 'either': its type is "
        "['object', 'null'], not 'object'; 'listed': it is list, not a JSON object; and 2 "
        "more); they are left out. Fix their inputSchema on the server: a JSON Schema of "
        "type 'object'."
    )


def test_each_schema_is_checked_once_not_before_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tools are listed before each model request, and a check takes milliseconds."""
    checked: list[object] = []
    check = toolset_module._unusable_schema

    def counting(schema: object) -> str | None:
        checked.append(schema)
        return check(schema)

    monkeypatch.setattr(toolset_module, "_unusable_schema", counting)
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    offered, lines = through_a_lenient_client({"a": schema, "b": dict(schema)})
    assert offered == ["old__a", "old__b"] and lines == []
    assert checked == [schema]  # two tools, two steps: one check
