"""Edits and patches, computed in memory before anything is written.

:class:`EditMatcher` finds ``old_string`` in a file through a cascade of seven strategies,
strictest first, and stops at the first strategy that finds anything:

1. ``exact`` — the text as given;
2. ``trimmed_boundary`` — the text without its leading/trailing whitespace;
3. ``indentation_flexible`` — the same lines at another indentation; the replacement is
   re-indented by the same amount;
4. ``line_trimmed`` — each line compared without its surrounding whitespace;
5. ``whitespace_normalized`` — runs of whitespace inside lines collapsed;
6. ``escape_normalized`` — literal ``\\n``, ``\\t`` and escaped quotes read as what they
   mean (a model that double-escaped its arguments);
7. ``block_anchor`` — three lines or more whose first and last lines match exactly
   (trimmed) and whose middle is at least 80% similar.

A strategy that finds more than one place refuses (unless ``replace_all``), naming the
lines of every candidate: an ambiguous edit is never guessed. Nothing found at all is an
:class:`EditError` showing the closest text, so the model can copy it.

:func:`parse_patch` reads a unified diff (one or more files, ``/dev/null`` for creation
and deletion); :func:`render_file_patch` applies one file's hunks, verifying each hunk's
context and removed lines against the file — at the stated line, or the nearest place
they match exactly (trailing whitespace aside). A hunk whose context is not in the file
raises :class:`HunkContextError`, saying which hunk and what the file has there.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from akgentic.core.words import counted

__all__ = [
    "STRATEGIES",
    "EditError",
    "EditMatcher",
    "EditSpec",
    "FilePatch",
    "Hunk",
    "HunkContextError",
    "PatchError",
    "apply_edits",
    "parse_patch",
    "render_file_patch",
]

STRATEGIES = (
    "exact",
    "trimmed_boundary",
    "indentation_flexible",
    "line_trimmed",
    "whitespace_normalized",
    "escape_normalized",
    "block_anchor",
)


class EditError(ValueError):
    """An edit that cannot be applied; the message is the instruction for the model."""


class PatchError(ValueError):
    """A patch that cannot be read or applied; the message says where and why."""


class HunkContextError(PatchError):
    """A hunk whose context (or removed lines) is not what the file holds."""


@dataclass(frozen=True, slots=True)
class EditSpec:
    """One replacement: ``old_string`` → ``new_string``, once or everywhere."""

    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    replacement: str


class _Lines:
    """The content's lines with the offset where each starts (newlines excluded)."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.lines = content.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1

    def span(self, first: int, count: int) -> tuple[int, int]:
        last = first + count - 1
        return self.starts[first], self.starts[last] + len(self.lines[last])

    def line_of(self, offset: int) -> int:
        """1-based line number of ``offset``."""
        return self.content.count("\n", 0, offset) + 1


def _block(old: str) -> list[str]:
    return old.strip("\n").split("\n")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(text: str, indent: str) -> str:
    dedented = textwrap.dedent(text)
    return "\n".join(indent + line if line.strip() else line for line in dedented.split("\n"))


def _unescape(text: str) -> str:
    return (
        text.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace('\\"', '"')
        .replace("\\'", "'")
        .replace("\\\\", "\\")
    )


class EditMatcher:
    """The seven-strategy cascade; see the module docstring."""

    similarity: float = 0.8
    """The middle-lines similarity :data:`block_anchor` needs."""

    def find(self, content: str, old: str, new: str) -> tuple[str, list[_Span]]:
        """The first strategy that finds ``old``, and every place it found (with the text
        that replaces each); ``("", [])`` when none does."""
        lines = _Lines(content)
        finders: list[Callable[[_Lines, str, str], list[_Span]]] = [
            self._exact,
            self._trimmed_boundary,
            self._indentation_flexible,
            self._line_trimmed,
            self._whitespace_normalized,
            self._escape_normalized,
            self._block_anchor,
        ]
        for name, finder in zip(STRATEGIES, finders, strict=True):
            spans = finder(lines, old, new)
            if spans:
                return name, spans
        return "", []

    def replace(
        self,
        content: str,
        edit: EditSpec,
        path: str = "the file",
        write_tool: str = "workspace_write",
    ) -> tuple[str, str, int]:
        """``content`` with ``edit`` applied: (new content, strategy used, replacements made).

        Raises :class:`EditError` when ``old_string`` is empty or equal to ``new_string``,
        is not found, or is found in several places without ``replace_all``.
        """
        old, new = edit.old_string, edit.new_string
        if not old:
            raise EditError(
                f"old_string is empty: give the exact text to replace (to create a file, use "
                f"{write_tool})"
            )
        if old == new:
            raise EditError("old_string and new_string are the same: there is nothing to change")
        strategy, spans = self.find(content, old, new)
        if not spans:
            raise EditError(self._not_found(content, old, path))
        if len(spans) > 1 and not edit.replace_all:
            lines = _Lines(content)
            where = ", ".join(str(lines.line_of(s.start)) for s in spans[:10])
            raise EditError(
                f"old_string matches {len(spans)} places in {path} (lines {where}); include "
                f"more surrounding lines to make it unique, or set replace_all=true to change "
                f"every one"
            )
        out: list[str] = []
        cursor = 0
        for span in spans:
            out.append(content[cursor : span.start])
            out.append(span.replacement)
            cursor = span.end
        out.append(content[cursor:])
        return "".join(out), strategy, len(spans)

    # -- the strategies -------------------------------------------------------------------
    @staticmethod
    def _find_all(content: str, needle: str, replacement: str) -> list[_Span]:
        spans: list[_Span] = []
        start = content.find(needle)
        while start >= 0 and needle:
            spans.append(_Span(start, start + len(needle), replacement))
            start = content.find(needle, start + len(needle))
        return spans

    def _exact(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        return self._find_all(lines.content, old, new)

    def _trimmed_boundary(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        trimmed = old.strip()
        if trimmed == old or not trimmed:
            return []
        return self._find_all(lines.content, trimmed, new.strip())

    def _windows(
        self, lines: _Lines, old: str, same: Callable[[list[str], list[str]], bool]
    ) -> list[tuple[int, int]]:
        block = _block(old)
        size = len(block)
        found: list[tuple[int, int]] = []
        index = 0
        while index + size <= len(lines.lines):
            if same(lines.lines[index : index + size], block):
                found.append((index, size))
                index += size
            else:
                index += 1
        return found

    def _indentation_flexible(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        def same(window: list[str], block: list[str]) -> bool:
            return textwrap.dedent("\n".join(window)) == textwrap.dedent("\n".join(block))

        spans = []
        for first, size in self._windows(lines, old, same):
            window = lines.lines[first : first + size]
            indent = next((_indent(line) for line in window if line.strip()), "")
            start, end = lines.span(first, size)
            spans.append(_Span(start, end, _reindent(new.strip("\n"), indent)))
        return spans

    def _line_spans(
        self, lines: _Lines, old: str, new: str, same: Callable[[list[str], list[str]], bool]
    ) -> list[_Span]:
        block = _block(old)
        old_indent = next((_indent(line) for line in block if line.strip()), "")
        replacement = new.strip("\n")
        spans = []
        for first, size in self._windows(lines, old, same):
            start, end = lines.span(first, size)
            window = lines.lines[first : first + size]
            indent = next((_indent(line) for line in window if line.strip()), "")
            # the model got the indentation wrong in old_string: shift new_string the same way
            text = replacement if indent == old_indent else _reindent(replacement, indent)
            spans.append(_Span(start, end, text))
        return spans

    def _line_trimmed(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        def same(window: list[str], block: list[str]) -> bool:
            return all(a.strip() == b.strip() for a, b in zip(window, block, strict=True))

        return self._line_spans(lines, old, new, same)

    def _whitespace_normalized(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        def same(window: list[str], block: list[str]) -> bool:
            return all(a.split() == b.split() for a, b in zip(window, block, strict=True))

        return self._line_spans(lines, old, new, same)

    def _escape_normalized(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        unescaped = _unescape(old)
        if unescaped == old:
            return []
        return self._find_all(lines.content, unescaped, _unescape(new))

    def _block_anchor(self, lines: _Lines, old: str, new: str) -> list[_Span]:
        block = _block(old)
        if len(block) < 3:
            return []

        def same(window: list[str], block: list[str]) -> bool:
            if window[0].strip() != block[0].strip() or window[-1].strip() != block[-1].strip():
                return False
            middle_a = "\n".join(x.strip() for x in window[1:-1])
            middle_b = "\n".join(x.strip() for x in block[1:-1])
            ratio = difflib.SequenceMatcher(None, middle_a, middle_b).ratio()
            return ratio >= self.similarity

        return self._line_spans(lines, old, new, same)

    # -- the refusal ----------------------------------------------------------------------------
    def _not_found(self, content: str, old: str, path: str) -> str:
        lines = content.split("\n")
        block = _block(old)
        size = max(1, len(block))
        target = "\n".join(x.strip() for x in block)
        best, best_at = 0.0, -1
        for index in range(0, max(1, len(lines) - size + 1)):
            if index > 5000:
                break
            window = "\n".join(x.strip() for x in lines[index : index + size])
            ratio = difflib.SequenceMatcher(None, window, target).quick_ratio()
            if ratio > best:
                best, best_at = ratio, index
        hint = ""
        if best_at >= 0 and best >= 0.5:
            shown = "\n".join(lines[best_at : best_at + size])
            hint = f" The closest text is at line {best_at + 1}:\n{shown}\n"
        return (
            f"old_string was not found in {path} (tried: {', '.join(STRATEGIES)}).{hint} "
            f"Read the file again and copy old_string exactly as it is now."
        )


def apply_edits(
    content: str,
    edits: Sequence[EditSpec],
    path: str = "the file",
    write_tool: str = "workspace_write",
) -> tuple[str, list[str]]:
    """``content`` after every edit in order (all or nothing): (new content, strategies).
    ``write_tool``: what the caller's model calls the tool that writes a whole file.

    An edit that fails raises :class:`EditError` naming it (``edit 2 of 3: …``) and nothing
    is applied — the caller writes only the final result.
    """
    matcher = EditMatcher()
    used: list[str] = []
    for number, edit in enumerate(edits, 1):
        try:
            content, strategy, _ = matcher.replace(content, edit, path, write_tool)
        except EditError as exc:
            prefix = f"edit {number} of {len(edits)}: " if len(edits) > 1 else ""
            suffix = " No edit was applied." if len(edits) > 1 else ""
            raise EditError(f"{prefix}{exc}{suffix}") from None
        used.append(strategy)
    return content, used


# -- unified diffs ------------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    """One ``@@`` block: where it says it applies, and its lines tagged ``' '``, ``-``, ``+``."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    no_newline_old: bool = False
    no_newline_new: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " +"]


@dataclass
class FilePatch:
    """One file's part of a patch; ``old_path`` None creates, ``new_path`` None deletes."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The path the patch is about (the new one, unless it deletes)."""
        found = self.new_path if self.new_path is not None else self.old_path
        assert found is not None
        return found


def _patch_path(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse_patch(text: str) -> list[FilePatch]:
    """The files of a unified diff; :class:`PatchError` naming the line when it is malformed."""
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    remaining_old = remaining_new = 0
    last_tag = ""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            old_path = _patch_path(line[4:])
            new_path = _patch_path(lines[index + 1][4:])
            if old_path is None and new_path is None:
                raise PatchError(f"line {number}: both sides are /dev/null")
            current = FilePatch(old_path=old_path, new_path=new_path)
            patches.append(current)
            hunk = None
            index += 2
            continue
        match = _HUNK.match(line)
        if match:
            if current is None:
                raise PatchError(f"line {number}: a hunk before any '--- / +++' file header")
            if hunk is not None and (remaining_old or remaining_new):
                raise PatchError(
                    f"line {number}: the previous hunk is short by {remaining_old} old and "
                    f"{counted(remaining_new, 'new line')}; check its @@ counts"
                )
            old_start, old_count, new_start, new_count = (
                int(match.group(1)),
                int(match.group(2) or "1"),
                int(match.group(3)),
                int(match.group(4) or "1"),
            )
            hunk = Hunk(old_start, old_count, new_start, new_count)
            current.hunks.append(hunk)
            remaining_old, remaining_new = old_count, new_count
            index += 1
            continue
        if hunk is not None and (remaining_old or remaining_new):
            if line.startswith("\\"):
                index += 1
                continue
            tag, body = (line[:1] or " "), line[1:]
            if tag not in " -+":
                raise PatchError(
                    f"line {number}: {line!r} inside a hunk must start with ' ', '-' or '+'"
                )
            hunk.lines.append((tag, body))
            if tag in " -":
                remaining_old -= 1
            if tag in " +":
                remaining_new -= 1
            if remaining_old < 0 or remaining_new < 0:
                raise PatchError(f"line {number}: the hunk has more lines than its @@ header says")
            last_tag = tag
            index += 1
            continue
        if hunk is not None and line.startswith("\\"):
            if last_tag in " -":
                hunk.no_newline_old = True
            if last_tag in " +":
                hunk.no_newline_new = True
            index += 1
            continue
        if hunk is not None and line.startswith(("-", "+", " ")) and not line.startswith("---"):
            raise PatchError(
                f"line {number}: the hunk has more lines than its @@ header says; fix the counts"
            )
        hunk = None if not line.startswith("\\") else hunk
        index += 1
    if hunk is not None and (remaining_old or remaining_new):
        raise PatchError(
            f"the last hunk is short by {remaining_old} old and "
            f"{counted(remaining_new, 'new line')}; "
            f"check its @@ counts"
        )
    if not patches:
        raise PatchError(
            "no file in the patch: a unified diff starts each file with '--- a/path' and "
            "'+++ b/path' lines, then '@@ -l,n +l,n @@' hunks"
        )
    for patch in patches:
        if not patch.hunks and patch.new_path is not None:
            raise PatchError(f"the patch for {patch.path} has no hunk")
    return patches


def _same(a: str, b: str) -> bool:
    return a.rstrip() == b.rstrip()


def _matches_at(lines: list[str], at: int, expected: list[str]) -> bool:
    if at < 0 or at + len(expected) > len(lines):
        return False
    return all(_same(lines[at + i], text) for i, text in enumerate(expected))


def render_file_patch(original: str | None, patch: FilePatch) -> str | None:
    """The file after ``patch``: its new text, or None when the patch deletes it.

    Raises :class:`HunkContextError` when a hunk's context or removed lines are not in the
    file (at its line or anywhere after the previous hunk), and :class:`PatchError` when
    the patch creates a file that exists or changes one that does not.
    """
    if patch.old_path is None and original is not None:
        raise PatchError(f"the patch creates {patch.path}, which already exists; patch it instead")
    if patch.old_path is not None and original is None:
        raise PatchError(f"{patch.old_path} does not exist; a patch can only change existing files")
    text = original or ""
    final_newline = text.endswith("\n") or not text
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not text:
        lines = []
    out: list[str] = []
    cursor = 0
    for number, hunk in enumerate(patch.hunks, 1):
        expected = hunk.old_lines
        # Hunk positions are in the original file's numbering; ``-l,0`` inserts after line l.
        stated = hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1
        if not expected:
            at = min(max(stated, cursor), len(lines))
        elif stated >= cursor and _matches_at(lines, stated, expected):
            at = stated
        else:
            last = len(lines) - len(expected)
            candidates = [i for i in range(cursor, last + 1) if _matches_at(lines, i, expected)]
            if not candidates:
                shown = "\n".join(lines[stated : stated + len(expected)]) or "(end of file)"
                wanted = "\n".join(expected)
                raise HunkContextError(
                    f"hunk {number} of {patch.path} (@@ -{hunk.old_start},{hunk.old_count} @@) "
                    f"does not match the file: it expects\n{wanted}\nbut line {stated + 1} "
                    f"onwards holds\n{shown}\nNothing was written. Read the file again and "
                    f"rebuild the patch from what it holds now."
                )
            at = min(candidates, key=lambda i: abs(i - stated))
        out.extend(lines[cursor:at])
        out.extend(hunk.new_lines)
        cursor = at + len(expected)
        if cursor >= len(lines):
            if hunk.no_newline_new:
                final_newline = False
            elif hunk.no_newline_old:
                final_newline = True
    out.extend(lines[cursor:])
    if patch.new_path is None:
        if out:
            raise HunkContextError(
                f"the patch deletes {patch.old_path} but does not remove all of its lines"
            )
        return None
    if not out:
        return ""
    return "\n".join(out) + ("\n" if final_newline else "")
