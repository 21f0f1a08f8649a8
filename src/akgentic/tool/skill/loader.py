"""Loading skills from files: ``SKILL.md`` with YAML frontmatter, or plain YAML.

Two formats, both read:

1. ``SKILL.md`` — a YAML frontmatter block between two ``---`` lines, holding ``name`` and
   ``description``; the markdown after it is the content::

       ---
       name: refund-policy
       description: How refunds are approved.
       ---
       Refunds under 100 EUR are approved by the agent handling the case.

2. ``*.yaml`` / ``*.yml`` — a mapping with ``name``, ``description`` and the content under
   ``body`` (or ``content``; not both).

An optional ``toolset`` names the toolset the skill tells the model to enable (see
``SkillEntry.toolset``). Other keys are ignored, so files written for other tools
(``license``, ``allowed-tools``…) load unchanged. A path may be a file (any ``.md``,
``.yaml`` or ``.yml``) or a directory, searched recursively for ``SKILL.md``, ``*.yaml``
and ``*.yml``, in sorted path order. A link to a folder is not followed; one whose target
lies outside the directory is reported (name that folder itself).

Nothing here raises for a bad file: a broken file is reported in ``LoadResult.errors`` (the
file and the reason) and skipped. A duplicate name is reported too, in one line naming both
files, and never replaces a skill silently: between two files, the one **named after the
skill** (a ``SKILL.md`` in a folder of that name, or ``NAME.yaml``) wins — so a stray
``broken3/SKILL.md`` saying ``name: plan-work`` cannot take ``plan-work/``'s place — and
otherwise the first file, in load order. :func:`assemble` applies the same rule across a
card's sources: its own skills, then its folders, then the skill store's rows (the card's
own skills and the store's rows are named after nothing: the first of them wins). A store
row that is the same skill as one already loaded (name, description and content alike: the
store's copy of a folder the card reads too) is no duplicate: it is left out unsaid.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import ConfigDict, Field, ValidationError

from akgentic.core import (
    NotUtf8Error,
    YamlTooLargeError,
    load_yaml,
    not_a_file,
    read_yaml_file,
    yaml_problem,
    yaml_text,
)
from akgentic.core.excerpt import validation_words
from akgentic.core.serialization import SerializableModel
from akgentic.tool.skill.tool import SKILLS_DIR_ENV, SkillEntry, SkillRow

__all__ = [
    "LoadError",
    "LoadResult",
    "SkillFileError",
    "SkillsSkippedEvent",
    "assemble",
    "load_skills",
    "parse_skill_file",
]

SKILL_FILE = "SKILL.md"
YAML_SUFFIXES = (".yaml", ".yml")
TOO_LARGE = "make its content shorter, or split it into several skills"
"""What to do with a skill file over the YAML reader's size limit."""


class LoadError(SerializableModel):
    """A file that was skipped, and why."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    path: str
    reason: str


class LoadResult(SerializableModel):
    """The skills loaded, in load order, and the files skipped."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    skills: list[SkillEntry] = Field(default_factory=list)
    errors: list[LoadError] = Field(default_factory=list)


class SkillFileError(ValueError):
    """A file that cannot be turned into a skill; the message is the reason."""


class SkillsSkippedEvent(SerializableModel):
    """On the team stream when a card is wired: the skills it skipped, and why."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    errors: list[LoadError]


class _Collector:
    """One LoadResult filled in order; of two skills of one name, the file named after it
    wins, else the first (see the module docstring)."""

    def __init__(self) -> None:
        self.result = LoadResult()
        self.origin: dict[str, tuple[str, bool]] = {}  # name -> (source, named after it)

    def admit(self, entry: SkillEntry, source: str, path: Path | None = None) -> None:
        named = path is not None and _named_after(path, entry.name)
        held = self.origin.get(entry.name)
        if held is None:
            self.origin[entry.name] = (source, named)
            self.result.skills.append(entry)
            return
        first, first_named = held
        if named and not first_named and first != "the card's skills":
            kept, skipped, why = source, first, "it is named after the skill"
            self.origin[entry.name] = (source, named)
            self.result.skills = [entry if s.name == entry.name else s for s in self.result.skills]
        else:
            kept, skipped = first, source
            why = "it is named after the skill" if first_named else "it was loaded first"
        self.error(
            skipped,
            f"duplicate skill name {entry.name!r}: in {skipped} and in {kept}; kept {kept} "
            f"({why}) and skipped the other — rename one of them",
        )

    def holds(self, entry: SkillEntry) -> bool:
        """Whether ``entry`` is already here as the same skill: its name, description and
        content (the toolset is not compared: a row stored before the store kept links has
        none, and the copy kept has its own)."""
        return any(
            (s.name, s.description, s.content) == (entry.name, entry.description, entry.content)
            for s in self.result.skills
        )

    def error(self, source: str, reason: str) -> None:
        self.result.errors.append(LoadError(path=source, reason=reason))

    def files(self, paths: Iterable[str | PathLike[str]]) -> None:
        for path in _files(paths, self.result):
            try:
                self.admit(parse_skill_file(path), str(path), path)
            except SkillFileError as exc:
                self.error(str(path), str(exc))


def load_skills(paths: Iterable[str | PathLike[str]]) -> LoadResult:
    """Load every skill under ``paths`` (files or directories), in order; never raises."""
    collector = _Collector()
    collector.files(paths)
    return collector.result


def assemble(
    inline: Iterable[SkillEntry],
    folders: Iterable[str | PathLike[str]],
    rows: Iterable[SkillRow],
    store: bool = True,
) -> LoadResult:
    """A card's skills: ``inline``, then ``folders``, then the store's ``rows`` (when
    ``store``). The first of a name wins; every skip is in ``errors``, except a row that is
    the same skill as one already there (see the module docstring). Never raises."""
    collector = _Collector()
    for entry in inline:
        collector.admit(entry, "the card's skills")
    collector.files(folders)
    for row in rows if store else []:
        source = f"skill store: {row.name}" + (f" (from {row.source})" if row.source else "")
        try:
            entry = SkillEntry(
                name=row.name, description=row.description, content=row.content, toolset=row.toolset
            )
        except ValidationError as exc:
            collector.error(source, _problems(exc))
            continue
        if not collector.holds(entry):  # the store's copy of a file read above: one skill
            collector.admit(entry, source)
    return collector.result


def _named_after(path: Path, name: str) -> bool:
    """Whether ``path`` is named after the skill ``name``: ``name/SKILL.md`` or
    ``name.yaml``/``name.yml``/``name.md``."""
    return (path.parent.name if path.name == SKILL_FILE else path.stem) == name


def _files(paths: Iterable[str | PathLike[str]], result: LoadResult) -> Iterator[Path]:
    """The skill files under ``paths``, each checked to be a regular file: a directory's
    ``SKILL.md``, ``*.yaml`` and ``*.yml`` (a FIFO, a socket or a device of such a name is
    reported too, not skipped silently: the person put it there as a skill)."""
    for raw in paths:
        path = Path(raw)
        found = [path]
        if _is_dir(path):
            entries = sorted(path.rglob("*"))  # links to folders are listed, not followed
            found = [
                p
                for p in entries
                if (p.name == SKILL_FILE or p.suffix in YAML_SUFFIXES) and not _is_dir(p)
            ]
            for link in (p for p in entries if p.is_symlink() and _is_dir(p)):
                outside = _linked_outside(link, path)
                if outside is not None:
                    result.errors.append(LoadError(path=str(link), reason=outside))
        for file in found:
            problem = _not_a_file(file)
            if problem is None:
                yield file
            else:
                result.errors.append(LoadError(path=str(file), reason=problem))


def _linked_outside(link: Path, root: Path) -> str | None:
    """Why ``link``, a link to a folder found in ``root``, is reported: its target lies
    outside ``root`` (a folder search does not follow it: a link to ``..`` or ``/`` would
    read far more than the skills). None for a target inside, read through its own path."""
    target = link.resolve()
    if target.is_relative_to(root.resolve()):
        return None
    return (
        f"is a link to {os.readlink(link)}, a folder outside {root}; a folder search does not "
        f"follow it: name that folder in the card's folders (or {SKILLS_DIR_ENV}) to load "
        f"its skills"
    )


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a directory (following links); False when it cannot be told,
    the path then being reported as the file it was named as."""
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except OSError:
        return False


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` is no skill file to read — missing, unreadable, or not a regular file
    (reading a FIFO or a terminal would wait for a writer) — or None when it is one."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return f"is a link to {os.readlink(path)}, which does not exist: fix or remove it"
        return "no such file or directory"
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else not_a_file(mode)
    return (
        f"is {kind}, not a file: a skill is a regular {SKILL_FILE}, .md, .yaml or .yml file; "
        f"name one (or its folder), or move this out of the skills folder"
    )


def parse_skill_file(path: Path) -> SkillEntry:
    """One file as a skill; :class:`SkillFileError` (whose message is the reason) otherwise.

    Read as the project reads YAML (:func:`read_yaml_file`): a file over its 4 MiB limit
    is refused before it is read, and a FIFO put in its place is refused, not waited on."""
    try:
        text = yaml_text(read_yaml_file(path, what="a skill file", fix=TOO_LARGE), "skill file")
    except YamlTooLargeError as exc:
        raise SkillFileError(f"is too large: {exc}") from None
    except NotUtf8Error as exc:
        raise SkillFileError(f"line {exc.line}: {exc}") from None
    except OSError as exc:
        raise SkillFileError(f"cannot be read: {exc.strerror or exc}") from None
    if path.suffix in YAML_SUFFIXES:
        fields = _mapping(text, "the file")
        body = fields.get("body")
        if body is not None and "content" in fields:
            raise SkillFileError("gives both 'body' and 'content'; the content is one of them")
        content = body if body is not None else fields.get("content", "")
    elif path.suffix == ".md":
        front, content = _frontmatter(text)
        fields = _mapping(front, "the frontmatter", first_line=2)
    else:
        raise SkillFileError(f"is not a skill file: expected {SKILL_FILE}, .md, .yaml or .yml")
    if not isinstance(content, str):
        raise SkillFileError(f"the content must be text, not {type(content).__name__}")
    toolset = fields.get("toolset")
    if toolset is not None and not isinstance(toolset, str):
        raise SkillFileError(f"'toolset' must be text, not {type(toolset).__name__}")
    try:
        return SkillEntry(
            name=_text(fields, "name"),
            description=_text(fields, "description"),
            content=content.strip(),
            toolset=toolset,
        )
    except ValidationError as exc:
        raise SkillFileError(_problems(exc)) from None


def _problems(exc: ValidationError) -> str:
    return validation_words(exc)


def _frontmatter(text: str) -> tuple[str, str]:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillFileError("has no YAML frontmatter: the first line must be '---'")
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise SkillFileError("the frontmatter is not closed: no second '---' line")


def _mapping(text: str, what: str, *, first_line: int = 1) -> dict[str, Any]:
    try:
        data = load_yaml(text)
    except YamlTooLargeError as exc:
        raise SkillFileError(f"{what}: {exc}") from None
    except yaml.YAMLError as exc:
        problem = yaml_problem(exc, first_line=first_line)
        raise SkillFileError(f"{what} is not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise SkillFileError(f"{what} must be a mapping with name and description")
    return data


def _text(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise SkillFileError(f"'{key}' is missing")
    if not isinstance(value, str):
        raise SkillFileError(f"'{key}' must be text, not {type(value).__name__}")
    return value
