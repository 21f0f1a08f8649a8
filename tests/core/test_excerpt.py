"""An exception as words on one line: the one way a message quotes another error."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from akgentic.core.excerpt import (
    exception_line,
    exception_words,
    union_errors,
    validation_words,
    validator_words,
)


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


def test_an_exception_s_words_are_one_line_and_its_line_names_its_class() -> None:
    exc = ValueError("file is not\n  a database\t(code 26)")
    assert exception_words(exc) == "file is not a database (code 26)"
    assert exception_line(exc) == "ValueError: file is not a database (code 26)"


def test_an_exception_whose_str_raises_has_no_words_and_is_named_by_its_class() -> None:
    assert exception_words(UnprintableError()) == ""
    assert exception_line(UnprintableError()) == "UnprintableError"


class Settings(BaseModel):
    port: int = 0
    url: str = ""
    hosts: list[str] = []

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        raise ValueError("must be an http:// URL")

    @field_validator("hosts")
    @classmethod
    def _some(cls, value: list[str]) -> list[str]:
        if not value:  # an assert here would carry pytest's rewritten explanation
            raise AssertionError("name one host at least")
        return value

    @model_validator(mode="after")
    def _whole(self) -> Settings:
        raise ValueError("a port needs a URL")


def refusal(**fields: object) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        Settings.model_validate(fields)
    return refused.value


def test_a_pydantic_error_is_one_line_in_the_validators_own_words() -> None:
    """The one wording of a ``ValidationError`` every surface shows: each field and its
    message, no title, ``[type=…]``, input or link, no ``Value error, `` or ``Assertion
    failed, `` before a validator's words."""
    exc = refusal(port="x", url="ftp://h", hosts=[])
    said = (
        "port: Input should be a valid integer, unable to parse string as an integer; "
        "url: must be an http:// URL; hosts: name one host at least"
    )
    assert validation_words(exc) == exception_words(exc) == said
    assert exception_line(exc) == f"ValidationError for Settings: {said}"
    assert validation_words(refusal(), top="(config)") == "(config): a port needs a URL"
    assert validator_words("Value error, x") == validator_words("Assertion failed, x") == "x"


def test_many_pydantic_errors_are_the_first_few_and_a_count() -> None:
    exc = refusal(port="x", url="u", hosts=[])
    assert validation_words(exc, limit=1) == (
        "port: Input should be a valid integer, unable to parse string as an integer (and 2 more)"
    )


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1


class Knob(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shape: Shape | bool = True
    shapes: list[Shape | bool] = []


def union_refusal(data: dict[str, object]) -> list[tuple[tuple[object, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        Knob.model_validate(data)
    return union_errors(caught.value.errors(), data)


def test_a_union_s_errors_are_those_of_the_shape_the_value_was_written_in() -> None:
    # pydantic says it twice: shape.Shape.sise (extra) and shape.bool (not a boolean)
    assert union_refusal({"shape": {"sise": 2}}) == [
        (("shape", "sise"), "Extra inputs are not permitted")
    ]
    assert union_refusal({"shapes": [True, {"size": "big"}]}) == [
        (
            ("shapes", 1, "size"),
            "Input should be a valid integer, unable to parse string as an integer",
        )
    ]


def test_a_value_of_no_shape_a_union_takes_is_one_error_naming_every_shape() -> None:
    assert union_refusal({"shape": "maybe"}) == [
        (("shape",), "Input should be true or false, or a mapping of Shape's fields")
    ]


def test_errors_outside_unions_keep_their_place_and_words() -> None:
    data = {"shape": 3, "extra": 1}
    with pytest.raises(ValidationError) as caught:
        Knob.model_validate(data)
    assert union_errors(caught.value.errors(), data) == [
        (("shape",), "Input should be true or false, or a mapping of Shape's fields"),
        (("extra",), "Extra inputs are not permitted"),
    ]
