"""yaml_problem: a YAML syntax error on one line, with the file's line and column."""

from __future__ import annotations

import pytest
import yaml

from akgentic.core import yaml_problem


def problem_of(text: str, **kwargs: int) -> str:
    with pytest.raises(yaml.YAMLError) as caught:
        yaml.safe_load(text)
    return yaml_problem(caught.value, **kwargs)


def test_one_line_with_where_and_no_quoted_source() -> None:
    text = problem_of("name: x\nmembers: [a,\n  b: c\n")
    assert "\n" not in text and "<unicode string>" not in text and "^" not in text
    assert text == (
        "expected ',' or ']', but got '<stream end>' at line 4, column 1 "
        "(while parsing a flow sequence at line 2, column 10)"
    )


def test_lines_counted_from_where_the_text_starts_in_its_file() -> None:
    """A front matter after a '---' line starts at line 2 of its file."""
    assert problem_of("name: [x\ndescription: d\n", first_line=2) == (
        "expected ',' or ']', but got ':' at line 3, column 12 "
        "(while parsing a flow sequence at line 2, column 7)"
    )


def test_a_problem_without_context() -> None:
    assert problem_of("a: b: c\n") == ("mapping values are not allowed here at line 1, column 5")


def test_a_tab_says_yaml_indents_with_spaces() -> None:
    # PyYAML's own words name the character but not the rule a person broke
    assert problem_of("name: x\nmembers:\n\t- a\n") == (
        "found character '\\t' that cannot start any token at line 3, column 1 "
        "(while scanning for the next token): YAML indents with spaces, never tabs: "
        "replace the tab with spaces"
    )
