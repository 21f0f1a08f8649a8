"""CommandRegistry: registration by name, schema from the signature, the dispatch grammar."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import (
    CommandArg,
    CommandArgumentError,
    CommandNotRecognized,
    CommandRegistry,
    CommandsAnnouncedEvent,
    RestOfLine,
    RetriableError,
)

switched: list[str] = []


def switch_model(model: str) -> str:
    """Make a roster entry the model in force.

    The key is provider:model.
    """
    switched.append(model)
    return f"switched to {model}"


def list_models() -> str:
    """List the roster."""
    return "openai:gpt-5.2"


def schedule(message: str, delay: int = 60, urgent: bool = False) -> tuple[str, int, bool]:
    """Schedule a message to yourself."""
    return (message, delay, urgent)


def tag(*labels: str) -> list[str]:
    """Tag with any number of labels."""
    return list(labels)


@pytest.fixture
def registry() -> CommandRegistry:
    switched.clear()
    registry = CommandRegistry()
    for fn in (switch_model, list_models, schedule, tag):
        registry.register(fn, owner="ModelTool")
    return registry


def test_registered_by_callable_name(registry: CommandRegistry) -> None:
    assert registry.names() == ["switch_model", "list_models", "schedule", "tag"]
    assert "switch_model" in registry and "nope" not in registry
    assert registry.get("list_models") is list_models
    assert len(registry) == 4


def test_registering_one_name_twice_raises_naming_both_owners(registry: CommandRegistry) -> None:
    def list_models() -> str:
        return ""

    with pytest.raises(ValueError, match="/list_models is registered twice: by ModelTool and by X"):
        registry.register(list_models, owner="X")


def test_schema_is_derived_from_the_signature(registry: CommandRegistry) -> None:
    by_name = {d.name: d for d in registry.descriptors()}
    assert by_name["switch_model"].description == "Make a roster entry the model in force."
    assert by_name["switch_model"].args == [CommandArg(name="model", type="str", required=True)]
    assert by_name["schedule"].args == [
        CommandArg(name="message", type="str", required=True),
        CommandArg(name="delay", type="int", required=False, default=60),
        CommandArg(name="urgent", type="bool", required=False, default=False),
    ]
    assert by_name["list_models"].args == []
    assert by_name["schedule"].usage == "/schedule message [delay=60] [urgent=False]"


def test_announcement_round_trips(registry: CommandRegistry) -> None:
    event = registry.announcement()
    back = deserialize(serialize(event))
    assert isinstance(back, CommandsAnnouncedEvent)
    assert [d.name for d in back.commands] == registry.names()
    assert back.commands[2].args[1].default == 60


# -- the grammar ---------------------------------------------------------------------


def test_positional(registry: CommandRegistry) -> None:
    assert registry.dispatch("/switch_model openai:gpt-5.2") == "switched to openai:gpt-5.2"


def test_keyword(registry: CommandRegistry) -> None:
    assert registry.dispatch("/switch_model model=openai:gpt-5.2") == "switched to openai:gpt-5.2"


def test_an_unknown_keyword_binds_the_whole_token_positionally(registry: CommandRegistry) -> None:
    assert registry.dispatch("/switch_model key=openai:gpt-5.2") == (
        "switched to key=openai:gpt-5.2"
    )
    assert switched == ["key=openai:gpt-5.2"]


def test_a_value_containing_equals_after_a_keyword_is_kept(registry: CommandRegistry) -> None:
    assert registry.dispatch("/schedule message=a=b delay=5") == ("a=b", 5, False)


def test_shell_like_quoting(registry: CommandRegistry) -> None:
    assert registry.dispatch("/schedule 'check the build' 30") == ("check the build", 30, False)
    assert registry.dispatch('/schedule message="x y" urgent=true') == ("x y", 60, True)


def test_leading_slash_and_whitespace_are_optional(registry: CommandRegistry) -> None:
    assert registry.dispatch("  list_models  ") == "openai:gpt-5.2"
    assert registry.dispatch("/list_models") == "openai:gpt-5.2"


def test_variadic_positionals(registry: CommandRegistry) -> None:
    assert registry.dispatch("/tag a b 'c d'") == ["a", "b", "c d"]
    assert registry.dispatch("/tag") == []


def test_unknown_first_token_is_not_recognized(registry: CommandRegistry) -> None:
    with pytest.raises(CommandNotRecognized, match="unknown command /swtich_model") as info:
        registry.dispatch("/swtich_model openai:gpt-5.2")
    assert info.value.command == "swtich_model"
    assert "switch_model" in info.value.known
    with pytest.raises(CommandNotRecognized):
        registry.dispatch("/")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("/switch_model", "missing a required argument: 'model'"),
        ("/list_models extra", "too many positional arguments"),
        ("/switch_model a b", "too many positional arguments"),
        ("/schedule hi delay=soon", "argument delay='soon' is not a valid int"),
        ("/schedule hi delay=1 delay=2", "argument 'delay' given twice"),
        # a name that is no argument, not its value refused as the next argument's
        ("/schedule hi dealy=5", "unknown argument 'dealy' (its arguments: message, delay, "),
        ("/schedule hi urgnet=true", "unknown argument 'urgnet' (its arguments: "),
        ("/list_models verbose=1", "unknown argument 'verbose' (it takes none)"),
        ("/schedule hi 5 delay=6", "multiple values for argument 'delay'"),
        ("/schedule 'unterminated", "No closing quotation: a quote opened is never closed"),
        ("/schedule hi\\", "No escaped character: the text ends with a backslash"),
        ("/schedule hi true", "argument delay='true' is not a valid int. Usage"),
        ("/schedule hi false", "argument delay='false' is not a valid int. Usage"),
    ],
)
def test_bad_arguments_are_a_readable_retriable_error(
    registry: CommandRegistry, text: str, problem: str
) -> None:
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch(text)
    message = str(info.value)
    assert problem in message
    assert message.startswith(f"/{text.split()[0].lstrip('/')}: ")
    assert "Usage: /" in message
    assert isinstance(info.value, RetriableError)
    assert not isinstance(info.value, CommandNotRecognized)


def test_errors_raised_by_the_command_itself_propagate() -> None:
    def boom() -> None:
        raise RetriableError("the roster is empty")

    registry = CommandRegistry()
    registry.register(boom)
    with pytest.raises(RetriableError, match="the roster is empty") as info:
        registry.dispatch("/boom")
    assert not isinstance(info.value, CommandArgumentError)


def test_programmatic_call(registry: CommandRegistry) -> None:
    assert registry.call("schedule", "x", delay=1) == ("x", 1, False)
    with pytest.raises(CommandNotRecognized):
        registry.call("nope")


def test_json_values_convert_to_structured_annotations() -> None:
    def pick(ids: list[int], mode: Any = "fast") -> tuple[list[int], Any]:
        return ids, mode

    registry = CommandRegistry()
    registry.register(pick)
    assert registry.dispatch("/pick [1,2] mode=slow") == ([1, 2], "slow")
    with pytest.raises(CommandArgumentError, match=r"ids='x' is not a valid list\[int\]"):
        registry.dispatch("/pick x")


def test_a_callable_without_a_name_needs_one() -> None:
    class NamelessCallable:
        def __call__(self) -> str:
            return "ok"

    registry = CommandRegistry()
    with pytest.raises(ValueError, match="pass name="):
        registry.register(NamelessCallable())
    registry.register(NamelessCallable(), name="ok")
    assert registry.dispatch("/ok") == "ok"


class Point(BaseModel):
    x: int


def test_a_json_list_with_an_item_of_the_wrong_type_names_the_item() -> None:
    def pick(ids: list[int], points: list[Point] | None = None) -> list[int]:
        return ids

    registry = CommandRegistry()
    registry.register(pick)
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch("""/pick '[1,"x",3]'""")
    message = str(info.value)
    assert "ids[1]: Input should be a valid integer" in message and "got 'x'" in message
    assert "Input should be a valid list" not in message
    with pytest.raises(CommandArgumentError, match=r"points\[1\]\.x: Input should be a valid int"):
        registry.dispatch("""/pick [1] 'points=[{"x":1},{"x":"two"}]'""")
    with pytest.raises(CommandArgumentError, match=r"ids: Input should be a valid list, got 'x'"):
        registry.dispatch("/pick x")  # not JSON at all: the text itself is what is wrong


def test_what_an_error_quotes_of_the_input_is_capped(registry: CommandRegistry) -> None:
    long = "x" * 90_000
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch(f"/schedule hi delay={long}")
    assert len(str(info.value)) < 1000 and "(90002 characters)" in str(info.value)
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch(f"/schedule 'hi {long}' delay={long}")
    assert len(str(info.value)) < 1000
    huge = "x" * 1_000_000
    with pytest.raises(CommandArgumentError, match="1000018 characters long; at most 100000"):
        registry.dispatch(f"/schedule hi delay={huge}")
    with pytest.raises(CommandNotRecognized) as unknown:
        registry.dispatch(f"/{huge}")
    assert len(str(unknown.value)) < 1000


def test_describe_lists_every_command_s_usage_and_describes_one(
    registry: CommandRegistry,
) -> None:
    assert registry.describe().splitlines() == [
        "Commands (/help NAME describes one):",
        "  /switch_model model — Make a roster entry the model in force.",
        "  /list_models — List the roster.",
        "  /schedule message [delay=60] [urgent=False] — Schedule a message to yourself.",
        "  /tag — Tag with any number of labels.",
    ]
    assert (
        registry.describe("switch_model")
        == registry.describe("/switch_model")
        == (
            "/switch_model model\nMake a roster entry the model in force.\n\n"
            "The key is provider:model."
        )
    )
    with pytest.raises(CommandNotRecognized) as unknown:
        registry.describe("/nope")
    assert unknown.value.command == "nope"
    assert CommandRegistry().describe() == "No commands."


def test_help_shows_a_docstring_s_literals_as_a_person_reads_them() -> None:
    """Docstrings double their backquotes (reStructuredText); ``/help`` and the commands a
    frontend lists show a person single ones."""

    def remind(delay_seconds: float) -> str:
        """Remind me after ``delay_seconds`` (see :class:`~akgentic.x.Notes`).

        Cancel with ``cancel_notification``."""
        return ""

    registry = CommandRegistry()
    registry.register(remind)
    assert registry.describe().splitlines()[1] == (
        "  /remind delay_seconds — Remind me after `delay_seconds` (see `Notes`)."
    )
    assert registry.describe("remind") == (
        "/remind delay_seconds\nRemind me after `delay_seconds` (see `Notes`).\n\n"
        "Cancel with `cancel_notification`."
    )
    assert registry.descriptors()[0].description == (
        "Remind me after `delay_seconds` (see `Notes`)."
    )


def test_a_json_argument_needs_no_shell_quoting() -> None:
    """A JSON array or object is one token as typed — its quotes and spaces kept — alone
    or after ``name=``; quoted, it is what it was; anything else is shell words."""

    def plan(items: list[dict[str, Any]], note: str = "") -> tuple[list[dict[str, Any]], str]:
        return items, note

    registry = CommandRegistry()
    registry.register(plan)
    item = [{"op": "create", "title": "x y"}]
    assert registry.dispatch('/plan [{"op": "create", "title": "x y"}]') == (item, "")
    assert registry.dispatch('/plan items=[{"op": "create", "title": "x y"}] note="a b"') == (
        item,
        "a b",
    )
    assert registry.dispatch("""/plan '[{"op": "create", "title": "x y"}]'""") == (item, "")
    assert registry.dispatch("/plan [] '[not json'") == ([], "[not json")
    with pytest.raises(CommandArgumentError, match="No closing quotation"):
        registry.dispatch("/plan " + "[1, " * 20_000 + '"')  # JSON-like, nested too deep


def test_bad_json_is_reported_as_the_json_mistake_naming_the_argument() -> None:
    """A value meant as JSON that is not (a trailing comma, an unquoted name) is said as
    its JSON mistake — where, and what was expected — not as a type error: typed bare,
    the splitter read it as shell words and the arguments did not even bind."""

    def conf(settings: dict[str, int], note: str = "") -> dict[str, int]:
        return settings

    registry = CommandRegistry()
    registry.register(conf)
    for text in ('/conf {"a": 1,}', """/conf '{"a": 1,}'""", '/conf settings={"a": 1,}'):
        with pytest.raises(CommandArgumentError) as info:
            registry.dispatch(text)
        message = str(info.value)
        assert message.startswith("/conf: argument settings is not valid JSON: "), message
        assert "Expecting property name enclosed in double quotes at character 9" in message
        assert "write a dict[str, int] as JSON" in message and "too many" not in message
    with pytest.raises(CommandArgumentError, match="^/conf: too many positional arguments"):
        registry.dispatch('/conf {"a": 1} [x y')  # a str argument is text, JSON or not


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    r: float


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


def test_a_type_is_named_without_annotated_metadata_at_any_depth() -> None:
    """``list[Annotated[Circle | Square, Field(discriminator=...)]]`` reads
    ``list[Circle | Square]`` in the schema and in an error (it read with its FieldInfo)."""

    def draw(
        shapes: list[Annotated[Circle | Square, Field(discriminator="kind")]],
        tags: dict[str, Any] | None = None,
    ) -> int:
        return len(shapes)

    registry = CommandRegistry()
    registry.register(draw)
    [descriptor] = registry.descriptors()
    assert [arg.type for arg in descriptor.args] == [
        "list[Circle | Square]",
        "dict[str, Any] | None",
    ]
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch("/draw circle")
    assert "argument shapes='circle' is not a valid list[Circle | Square] (" in str(info.value)
    assert registry.dispatch('/draw [{"kind": "square", "side": 2}]') == 1


def test_an_item_without_the_field_that_names_its_kind_says_which_field() -> None:
    """pydantic's words for a tagged-union item without its tag, ``Unable to extract tag
    using discriminator 'kind'``, name no remedy: the error says the item has no
    ``kind`` and what that field is for."""

    def draw(shapes: list[Annotated[Circle | Square, Field(discriminator="kind")]]) -> int:
        return len(shapes)

    registry = CommandRegistry()
    registry.register(draw)
    with pytest.raises(CommandArgumentError) as info:
        registry.dispatch('/draw [{"side": 2}]')

    assert (
        "(shapes[0]: has no 'kind', the field that says which kind of item it is, got {'side': 2})"
    ) in str(info.value)
    assert "Unable to extract tag" not in str(info.value)


def test_a_single_value_where_a_list_is_expected_is_a_list_of_one() -> None:
    def hire(roles: list[str]) -> list[str]:
        return roles

    def pick(ids: list[int]) -> list[int]:
        return ids

    def draw(shapes: list[Circle | Square]) -> int:
        return len(shapes)

    registry = CommandRegistry()
    for command in (hire, pick, draw):
        registry.register(command)
    assert registry.dispatch("/hire Reviewer") == ["Reviewer"]
    assert registry.dispatch('/hire ["Reviewer", "Coder"]') == ["Reviewer", "Coder"]
    assert registry.dispatch("/pick 3") == [3]
    with pytest.raises(CommandArgumentError, match=r"ids: Input should be a valid list, got 'x'"):
        registry.dispatch("/pick x")
    with pytest.raises(CommandArgumentError, match=r"not a valid list\[str\]"):
        registry.dispatch('/hire {"a": 1}')  # an object is no role
    assert registry.dispatch('/draw {"kind": "circle", "r": 1}') == 1  # one object, one item


def note(delay: float, content: RestOfLine) -> tuple[float, str]:
    """Schedule a note."""
    return (delay, content)


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("/note 60 check the build", "check the build"),
        ("/note 60   check  the build  ", "check  the build"),
        ("/note 60 don't forget", "don't forget"),
        ('/note 60 "check the build"', "check the build"),
        ("/note 60 content=check the build", "check the build"),
        ("/note 60 content='check the build'", "check the build"),
        ("/note 60 [1, 2] {x}", "[1, 2] {x}"),
        ("/note delay=60 check the build", "check the build"),
    ],
)
def test_a_rest_of_line_argument_takes_the_rest_as_typed(text: str, content: str) -> None:
    registry = CommandRegistry()
    registry.register(note)
    assert registry.dispatch(text) == (60.0, content)


def test_a_rest_of_line_argument_is_shown_and_still_required() -> None:
    registry = CommandRegistry()
    registry.register(note)
    (described,) = registry.descriptors()
    assert described.usage == "/note delay content..."
    assert [a.rest_of_line for a in described.args] == [False, True]
    with pytest.raises(CommandArgumentError, match="missing a required argument: 'content'"):
        registry.dispatch("/note 60")
    with pytest.raises(CommandArgumentError, match="argument 'content' given twice|multiple"):
        registry.dispatch("/note content=a 60")
    assert registry.call("note", 5, "as a call") == (5.0, "as a call")


def test_only_a_last_parameter_may_take_the_rest_of_the_line() -> None:
    def bad(content: RestOfLine, delay: float) -> None:
        """Misdeclared."""

    with pytest.raises(ValueError, match="only its last parameter"):
        CommandRegistry().register(bad)
