"""A YAML syntax error as one line a person can act on.

PyYAML's own text spans several lines, quotes the parsed source (``in "<unicode string>"``
when it was given text, not a file) and draws carets under it. Whoever reports the error
already names the file; :func:`yaml_problem` says what is wrong and at which line and
column of that file, on one line.
"""

from __future__ import annotations

import yaml

from akgentic.core.excerpt import exception_words

__all__ = ["yaml_problem"]


def yaml_problem(exc: yaml.YAMLError, *, first_line: int = 1) -> str:
    """``expected ',' or ']', but got ':' at line 2, column 12 (while parsing a flow
    sequence at line 1, column 7)``. ``first_line`` is the file's line number of the
    text's first line (a YAML front matter after a ``---`` line starts at 2)."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return exception_words(exc)

    def at(mark: yaml.Mark | None) -> str:
        if mark is None:
            return ""
        return f" at line {mark.line + first_line}, column {mark.column + 1}"

    problem = exc.problem or exc.context or "not valid YAML"
    text = f"{problem}{at(exc.problem_mark)}"
    if exc.problem and exc.context:
        text += f" ({exc.context}{at(exc.context_mark)})"
    if "'\\t'" in problem:  # PyYAML's words for a tab where a token starts
        text += ": YAML indents with spaces, never tabs: replace the tab with spaces"
    return text
