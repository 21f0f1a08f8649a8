"""Counts in the words a person reads: ``1 model request``, ``4 model requests``.

One helper for every layer that writes a count into a line (the CLI's output, a usage
report rendered as text), so that no line says ``1 model requests``; and one for every
refusal of a name that is almost right (:func:`did_you_mean`), or that is no name at all
(:func:`env_var_name`, :func:`module_name_problem`).
"""

from __future__ import annotations

import difflib
import re

__all__ = ["counted", "did_you_mean", "env_var_name", "module_name_problem", "plain_literals"]

_ROLE = re.compile(r":\w+:`~?([^`]+)`")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` (thousands separated) and ``noun``, in the plural unless ``count`` is 1:
    ``noun`` + ``s``, or ``plural`` for a noun that does not take an ``s``."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def did_you_mean(name: str, candidates: list[str]) -> str:
    """``did you mean 'X'?`` for the candidates ``name`` was meant to be — those it
    matches ignoring case (``@worker`` for ``@Worker``), else the closest spellings —
    or ``""`` when none is near."""
    folded = name.casefold()
    near = [c for c in candidates if c.casefold() == folded]
    near = near or difflib.get_close_matches(name, candidates, n=2, cutoff=0.75)
    return "did you mean " + " or ".join(repr(c) for c in near) + "?" if near else ""


def plain_literals(text: str) -> str:
    """``text`` (a docstring) as a person reads it: a reStructuredText literal (a word
    between doubled backquotes) and a role (``:class:`~a.B```) become Markdown code, the
    word between single backquotes (a role keeps its last dotted part)."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return text.replace("``", "`")


def env_var_name(value: str, example: str) -> str:
    """``value`` when it reads as an environment variable's name (letters, digits and
    ``_``, not starting with a digit: what a shell can ``export``); a ``ValueError``
    otherwise. A field meant to hold a variable's *name* (``api_key_env``) is where the key
    itself gets pasted by mistake, so the error never repeats ``value``: it would print
    the key on the terminal and into every log and stored card that quotes it."""
    if _ENV_NAME.fullmatch(value):
        return value
    raise ValueError(
        f"must be the name of an environment variable (letters, digits and _, e.g. "
        f"{example}), never the key itself: export the key in a variable and name that "
        f"variable here"
    )


def module_name_problem(name: str) -> str | None:
    """Why ``name`` (an ``--import`` or a card's ``imports`` entry) is no module name, in
    words saying what to give instead; None when it reads as one (dotted identifiers).
    Python's own refusals of such a name (``Empty module name``, a relative import
    needing a package, ``'tally' is not a package`` for ``tally.py``) say nothing of the
    usual mistake: a file's path where its module's name belongs."""
    if name.endswith(".py") or "/" in name or "\\" in name:
        module = name.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
        return (
            f"{name!r} is a file, not a module name: give {module!r} (and run from the "
            f"folder that holds the file, or add that folder to PYTHONPATH)"
        )
    if not all(part.isidentifier() for part in name.split(".")):
        return f"{name!r} is not a module name: give a dotted name such as my_cards or pkg.cards"
    return None
