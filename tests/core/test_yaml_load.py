"""load_yaml refuses YAML whose shape would make whatever walks it next spend minutes or
never end: aliases nested in aliases, an alias inside its own anchor, nesting past
MAX_DEPTH; it reads everything else exactly as yaml.safe_load does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from akgentic.core import (
    MAX_YAML_BYTES,
    YamlShapeError,
    YamlTooLargeError,
    check_yaml_size,
    load_yaml,
    read_yaml_file,
    yaml_problem,
)
from akgentic.core import yaml_load as yaml_load_module
from akgentic.core.serialization import MAX_VALUES, SerializationError, check_shape
from tests.hostile_yaml import alias_bomb


def test_an_alias_bomb_is_refused_with_a_line_that_says_what_to_do() -> None:
    text = alias_bomb(8)  # 9 ** 8: 43 million values, from under 500 bytes
    assert len(text) < 500
    with pytest.raises(YamlShapeError) as refused:
        load_yaml(text)
    (line,) = str(refused.value).splitlines()
    assert f"expands to more than {MAX_VALUES:,} values" in line
    assert "use fewer aliases" in line
    assert isinstance(refused.value, yaml.YAMLError)  # every reader's YAML answer carries it


@pytest.mark.parametrize("text", ["a: &a [1, *a]", "a: &a {x: *a}", "- &a [[*a]]"])
def test_data_that_holds_itself_is_refused(text: str) -> None:
    with pytest.raises(YamlShapeError, match="contains itself"):
        load_yaml(text)


def test_nesting_past_the_bound_is_refused_and_at_the_bound_read() -> None:
    assert load_yaml("[" * 100 + "]" * 100) is not None
    with pytest.raises(YamlShapeError, match="nested deeper than 100 levels"):
        load_yaml("[" * 101 + "]" * 101)
    with pytest.raises(YamlShapeError, match="too deep to read"):
        load_yaml("[" * 5000 + "]" * 5000)  # deeper than the parser's own recursion


@pytest.mark.parametrize(
    "text",
    [
        "name: t\nmembers: [{a: 1}, {b: [1, 2.5, null, true]}]\n",
        "x: &x [1, 2]\ny: [*x, *x]\nz: {k: *x}\n",  # aliases, used a few times: fine
        alias_bomb(5),  # 59,049 values: within the bound
        "just text",
        "",
    ],
)
def test_everything_else_reads_as_safe_load_reads_it(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_a_syntax_error_is_yamls_own() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("[1, 2")
    assert not isinstance(caught.value, YamlShapeError)


def test_values_held_in_several_places_count_in_each() -> None:
    shared = list(range(999))  # 1,000 values with the list itself
    check_shape([shared] * 999)  # 999,001 values
    with pytest.raises(SerializationError, match="expands to more than"):
        check_shape([shared] * 1001)  # 1,001,001 values


def test_shared_values_are_measured_once_at_their_deepest() -> None:
    leaf: list[Any] = []
    chain: list[Any] = leaf
    for _ in range(98):
        chain = [chain]
    check_shape({"short": leaf, "long": chain})  # 100 levels from the top at most
    with pytest.raises(SerializationError, match="nested deeper"):
        check_shape({"short": leaf, "long": [chain]})


def test_a_key_written_twice_is_an_error_naming_both_lines() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("name: a\nmodel: x\nname: b\n")
    problem = yaml_problem(caught.value)
    assert problem.startswith(
        "found the key 'name' a second time (first at line 1): write it once at line 3, column 1"
    )
    with pytest.raises(yaml.YAMLError, match="'x' a second time"):
        load_yaml("outer: {x: 1, y: 2, x: 3}\n")


def test_keys_alike_in_text_but_of_other_types_are_two_keys() -> None:
    assert load_yaml('{1: a, "1": b}') == {1: "a", "1": "b"}


def test_a_key_a_merge_brought_in_may_be_overridden() -> None:
    text = "base: &base {model: a, temperature: 0}\nmember: {<<: *base, model: b}\n"
    assert load_yaml(text)["member"] == {"model": "b", "temperature": 0}


def test_yaml_over_the_size_limit_is_refused_unparsed_with_size_and_limit() -> None:
    text = "[" * (MAX_YAML_BYTES + 1)  # parsed, it would be "nested too deep"
    with pytest.raises(YamlTooLargeError) as refused:
        load_yaml(text)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"{MAX_YAML_BYTES + 1:,} bytes (4.0 MiB), over akgentic's 4 MiB limit")
    assert "make it smaller" in line
    assert isinstance(refused.value, yaml.YAMLError)  # every reader's YAML answer carries it


def test_the_size_limit_counts_utf8_bytes_not_characters() -> None:
    text = "# " + "é" * (MAX_YAML_BYTES // 2)  # fewer characters than the limit, more bytes
    assert len(text) < MAX_YAML_BYTES
    with pytest.raises(YamlTooLargeError, match="over akgentic's 4 MiB limit"):
        load_yaml(text)
    check_yaml_size(MAX_YAML_BYTES)  # at the limit: read


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            "1" * 5000,
            "an integer of 5,000 digits, more than the 4,300 Python reads: write a "
            "shorter number, or quote it to make it text",
        ),
        ("2001-13-45", "'2001-13-45' is not a valid timestamp (month must be in 1..12)"),
        ("2001-12-14t21:59:43.10+99:00", "is not a valid timestamp (offset must be"),
        ('!!int ""', "'' is not a valid int: correct it, or quote it to make it text"),
        ("!!timestamp abc", "'abc' is not a valid timestamp: correct it"),
        ("!!bool abc", "'abc' is not a valid bool: correct it"),
        ("!!set [1]", "expected a mapping node, but found sequence"),
    ],
)
def test_a_value_python_cannot_build_is_a_yaml_error_at_its_line(value: str, says: str) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(f"name: t\nmax_turns: {value}\n")
    (line,) = yaml_problem(caught.value).splitlines()
    assert says in line
    assert "at line 2, column 12" in line
    assert "set_int_max_str_digits" not in line and "NoneType" not in line


def test_a_character_yaml_does_not_allow_is_marked_at_its_line_and_column() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("name: t\nnotes: a\x01b\n")
    assert yaml_problem(caught.value) == (
        "character #x0001 is not allowed in YAML (special characters are not allowed): "
        "remove it at line 2, column 9"
    )


@pytest.mark.parametrize("escape", ["\\U00110000", "\\Uffffffff"])
def test_an_escape_past_the_last_character_is_a_yaml_error_at_its_line(escape: str) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(f'name: t\nnotes: "a{escape}"\n')
    assert yaml_problem(caught.value).startswith(
        "this escape names no character (\\U0010FFFF is the last one): correct it at line 2"
    )


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_named_as_a_yaml_file_is_refused_from_its_status_unopened(
    device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A character device (``/dev/tty`` would wait for a line, ``/dev/zero`` never ends, a
    device's open may act by itself) is refused before anything opens it, in words that
    say what it is and what to name instead."""
    opened: list[object] = []
    monkeypatch.setattr(yaml_load_module.os, "open", lambda *a, **k: opened.append(a) or -1)
    with pytest.raises(OSError) as refused:
        read_yaml_file(Path(device))
    assert refused.value.strerror == "a character device, not a file: name the YAML file itself"
    assert opened == []


def test_a_folder_named_as_a_yaml_file_is_said_to_be_one(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_yaml_file(tmp_path)
