"""The scenario format the scripted model plays, and its loader.

A scenario is YAML (or the equivalent dict)::

    name: weather                  # optional; defaults to the file's stem
    roles:                         # optional; without it the whole file serves every role
      assistant:
        rules:
          - when: 'weather in (?P<city>\\w+)'      # regex (single quotes keep \\ literal)
            steps:                                 # played one per model request
              - tool_calls:
                  - {tool: get_weather, args: {city: "{city}"}}
              - text: "[scripted] {city}: {result}"
          - when: "(?i)^hello"
            reply: {text: "[scripted] Hello!"}     # `reply` is a one-step `steps`
          - when: "storm"
            source: tool_return                    # matched against a tool's return instead
            reply: {text: "[scripted] Take shelter."}
        default: {text: "[scripted] No rule for: {message}"}
      "*": {...}                                   # any role not listed

A step holds ``text``, ``tool_calls`` (``{tool, args}``) and/or ``output`` (the arguments of the
agent's final-result tool when it has an output type). Strings in a step are ``str.format``
templates: ``{message}`` is the text the rule matched, ``{0}`` the whole match, ``{1}``... and
``{name}`` the regex groups, ``{result}`` the tool returns of the latest request. Literal braces
are doubled (``{{``). Placeholders are checked at load time.

Every error names the file and the rule's path (``roles.assistant.rules[2].when``), because a
scenario is authored by hand and the author needs to know which line to fix.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from akgentic.core import (
    NotUtf8Error,
    YamlTooLargeError,
    load_yaml,
    read_yaml_file,
    yaml_problem,
    yaml_text,
)
from akgentic.core.excerpt import validator_words

__all__ = [
    "DEFAULT_SCENARIO",
    "CompiledReply",
    "RoleScript",
    "Scenario",
    "ScenarioError",
    "ScriptedReply",
    "ScriptedRule",
    "ScriptedStep",
    "ScriptedToolCall",
    "load_scenario",
    "scenario_from_dict",
]

ANY_ROLE = "*"


class ScenarioError(ValueError):
    """A scenario that cannot be loaded or played; the message names the file and the rule."""


class ScriptedToolCall(BaseModel):
    """One tool call a step makes: the tool's name and its (templated) arguments."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptedStep(BaseModel):
    """What the model answers to one request: text, tool calls and/or structured output."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    output: Any = None

    @model_validator(mode="after")
    def _says_something(self) -> Self:
        if self.text is None and not self.tool_calls and self.output is None:
            raise ValueError("a step needs at least one of text, tool_calls or output")
        return self


class ScriptedReply(BaseModel):
    """A reply: one step (``reply``) or several played in turn (``steps``), never both."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    reply: ScriptedStep | None = None
    steps: list[ScriptedStep] | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_step_is_a_reply(cls, data: Any) -> Any:
        # `default: {text: ...}` and `{when: ..., text: ...}` read better than nesting a `reply`.
        if isinstance(data, Mapping) and not {"reply", "steps"} & set(data):
            step_keys = {"text", "tool_calls", "output"}
            step = {k: v for k, v in data.items() if k in step_keys}
            if step:
                rest = {k: v for k, v in data.items() if k not in step_keys}
                return {**rest, "reply": step}
        return data

    @model_validator(mode="after")
    def _exactly_one_form(self) -> Self:
        if (self.reply is None) == (self.steps is None):
            raise ValueError("give exactly one of `reply` (one step) or `steps` (a list)")
        if self.steps is not None and not self.steps:
            raise ValueError("`steps` is empty")
        return self

    def all_steps(self) -> list[ScriptedStep]:
        """The steps in play order."""
        return list(self.steps) if self.steps is not None else [self.reply]  # type: ignore[list-item]


class ScriptedRule(ScriptedReply):
    """A reply played when ``when`` (a regex, ``re.search``) matches.

    ``source: prompt`` (the default) matches the latest user prompt; ``source: tool_return``
    matches the tool returns that follow a reply whose steps have all been played.
    """

    when: str
    source: Literal["prompt", "tool_return"] = "prompt"


class RoleScript(BaseModel):
    """The rules of one role, tried in order, and the reply when none matches."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    rules: list[ScriptedRule] = Field(default_factory=list)
    default: ScriptedReply | None = None


DEFAULT_TEXT = (
    "[scripted] This is akgentic's offline scripted model, not an LLM, and no scenario rule "
    "matched. You said: {message}"
)

DEFAULT_SCENARIO: dict[str, Any] = {
    "name": "default",
    "rules": [],
    "default": {"text": DEFAULT_TEXT},
}
"""The built-in scenario (``scripted:default``): it echoes the prompt, plainly labelled."""


@dataclass(frozen=True, slots=True)
class CompiledReply:
    """A rule (or default) ready to play: its steps, its regex, and where it was written."""

    where: str
    steps: tuple[ScriptedStep, ...]
    pattern: re.Pattern[str] | None
    source: Literal["prompt", "tool_return"] = "prompt"

    def match(self, text: str) -> re.Match[str] | None:
        """``re.search`` of the rule's regex; a default (no regex) matches nothing."""
        return None if self.pattern is None else self.pattern.search(text)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A loaded, validated scenario: its name, its origin (for errors) and one script per role."""

    name: str
    origin: str
    roles: Mapping[str, tuple[tuple[CompiledReply, ...], CompiledReply]]

    def script(self, role: str | None) -> tuple[tuple[CompiledReply, ...], CompiledReply]:
        """The rules and default for ``role``: its own, else ``"*"``, else a clear error."""
        if role is not None and role in self.roles:
            return self.roles[role]
        if ANY_ROLE in self.roles:
            return self.roles[ANY_ROLE]
        if role is None and len(self.roles) == 1:
            return next(iter(self.roles.values()))
        known = ", ".join(sorted(self.roles))
        raise ScenarioError(
            f"scenario {self.origin}: no script for role {role!r}; it scripts {known}. "
            f"Add the role under `roles:` or a catch-all role {ANY_ROLE!r}."
        )


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = ".".join(str(p) for p in error["loc"])
        said = validator_words(error["msg"])
        parts.append(f"{loc}: {said}" if loc else said)
    return "; ".join(parts)


def _template_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _template_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _template_strings(item)


def _step_strings(step: ScriptedStep) -> Iterator[str]:
    if step.text is not None:
        yield step.text
    for call in step.tool_calls:
        yield from _template_strings(call.args)
    yield from _template_strings(step.output)


def _check_templates(where: str, steps: list[ScriptedStep], allowed: set[str]) -> None:
    formatter = string.Formatter()
    for index, step in enumerate(steps):
        for text in _step_strings(step):
            try:
                fields = [field for _, field, _, _ in formatter.parse(text) if field is not None]
            except ValueError as exc:
                raise ScenarioError(
                    f"{where} steps[{index}]: bad template {text!r}: {exc}"
                ) from exc
            for field in fields:
                name = re.split(r"[.\[!:]", field, maxsplit=1)[0]
                if name == "":
                    raise ScenarioError(
                        f"{where} steps[{index}]: empty placeholder '{{}}' in {text!r}; name it "
                        f"({', '.join(sorted(allowed))}) or double the braces"
                    )
                if name not in allowed:
                    raise ScenarioError(
                        f"{where} steps[{index}]: unknown placeholder {{{name}}} in {text!r}; "
                        f"known here: {', '.join(sorted(allowed))} (double braces for a literal)"
                    )


def _compile_rule(where: str, raw: Any) -> CompiledReply:
    try:
        rule = ScriptedRule.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(f"{where}: {_format_errors(exc)}") from exc
    try:
        pattern = re.compile(rule.when)
    except re.error as exc:
        raise ScenarioError(f"{where}.when: invalid regex {rule.when!r}: {exc}") from exc
    allowed = {"message", "result", *map(str, range(pattern.groups + 1)), *pattern.groupindex}
    steps = rule.all_steps()
    _check_templates(where, steps, allowed)
    return CompiledReply(where=where, steps=tuple(steps), pattern=pattern, source=rule.source)


def _compile_default(where: str, raw: Any) -> CompiledReply:
    try:
        reply = ScriptedReply.model_validate(raw if raw is not None else {"text": DEFAULT_TEXT})
    except ValidationError as exc:
        raise ScenarioError(f"{where}: {_format_errors(exc)}") from exc
    steps = reply.all_steps()
    _check_templates(where, steps, {"message", "result", "0"})
    return CompiledReply(where=where, steps=tuple(steps), pattern=None)


def _compile_role(
    origin: str, path: str, raw: Any
) -> tuple[tuple[CompiledReply, ...], CompiledReply]:
    if not isinstance(raw, Mapping):
        raise ScenarioError(
            f"scenario {origin}: {path} must be a mapping with `rules` and `default`"
        )
    unknown = set(raw) - set(RoleScript.model_fields)
    if unknown:
        fields = "an unknown field" if len(unknown) == 1 else "unknown fields"
        raise ScenarioError(
            f"scenario {origin}: {path} has {fields} "
            f"{', '.join(sorted(map(str, unknown)))}; a role holds `rules` and `default`"
        )
    rules_raw = raw.get("rules") or []
    if not isinstance(rules_raw, list):
        raise ScenarioError(f"scenario {origin}: {path}.rules must be a list")
    prefix = f"scenario {origin}: {path}"
    rules = tuple(
        _compile_rule(f"{prefix}.rules[{index}]", rule) for index, rule in enumerate(rules_raw)
    )
    default = _compile_default(f"{prefix}.default", raw.get("default"))
    return rules, default


def scenario_from_dict(data: Any, *, origin: str = "<dict>", name: str | None = None) -> Scenario:
    """Validate and compile a scenario held as data; errors name ``origin`` and the rule."""
    if not isinstance(data, Mapping):
        raise ScenarioError(
            f"scenario {origin}: expected a mapping at the top, got {type(data).__name__}"
        )
    top = dict(data)
    scenario_name = top.pop("name", None) or name or "scenario"
    if not isinstance(scenario_name, str):
        raise ScenarioError(f"scenario {origin}: `name` must be a string")
    roles: dict[str, tuple[tuple[CompiledReply, ...], CompiledReply]] = {}
    if "roles" in top:
        roles_raw = top.pop("roles")
        if top:
            raise ScenarioError(
                f"scenario {origin}: with `roles`, the top level holds only `name` and `roles`; "
                f"found {', '.join(sorted(map(str, top)))}"
            )
        if not isinstance(roles_raw, Mapping) or not roles_raw:
            raise ScenarioError(f"scenario {origin}: `roles` must map role names to scripts")
        for role, script in roles_raw.items():
            roles[str(role)] = _compile_role(origin, f"roles.{role}", script)
    else:
        roles[ANY_ROLE] = _compile_role(origin, "top level", top)
    return Scenario(name=scenario_name, origin=origin, roles=roles)


def load_scenario(path: str | Path) -> Scenario:
    """Read a YAML (or JSON) scenario file; a missing or malformed one is a ScenarioError."""
    file = Path(path)
    try:
        text = yaml_text(read_yaml_file(file), "scenario")
    except OSError as exc:
        raise ScenarioError(f"scenario {file}: cannot read it: {exc.strerror or exc}") from exc
    except YamlTooLargeError as exc:
        raise ScenarioError(f"scenario {file}: {exc}") from None
    except NotUtf8Error as exc:
        raise ScenarioError(f"scenario {file}:{exc.line}: {exc}") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"scenario {file}: not valid YAML: {yaml_problem(exc)}") from None
    return scenario_from_dict(data, origin=str(file), name=file.stem)
