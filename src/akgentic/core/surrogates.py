"""Text every layer can encode: lone surrogates become U+FFFD where text enters a team.

A Python string may hold a lone surrogate: argv bytes that are not UTF-8 arrive as
U+DC80..U+DCFF, and ``json.loads('"\\udce9"')`` makes one, so a request body, a tool's
output or a server's answer can carry it. No UTF-8 encoder accepts it: pydantic refuses
it in a request body, and a model request or an event holding it cannot be serialized,
so the turn fails — and, the message being stored, fails again on a resume. Text is
made sound once, where it enters (a person's message or command, a tool's return), with
:func:`replace_lone_surrogates`; the store keeps whatever it is given (``_codec``), and
what reads an older record back makes it sound on its way out
(:func:`replace_lone_surrogates_in` for JSON data)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["replace_lone_surrogates", "replace_lone_surrogates_in"]

_NOT_A_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
"""The lone surrogates that stand for no undecodable byte (those are U+DC80..U+DCFF)."""


def replace_lone_surrogates(text: str) -> str:
    """``text`` with its lone surrogates replaced, as a keyboard reads a typed line: each
    undecodable byte (U+DC80..U+DCFF, Python's stand-in for it) is decoded again with the
    bytes around it — a byte that is not UTF-8 becomes U+FFFD — and any other lone
    surrogate becomes U+FFFD. Text that encodes already is returned as is (the usual case,
    checked in one pass)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        text = _NOT_A_BYTE.sub("\ufffd", text)
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def replace_lone_surrogates_in(data: Any) -> Any:
    """``data`` (JSON data, or a model dumped as Python data) with the lone surrogates of
    every string in it, dict keys too, replaced as :func:`replace_lone_surrogates` does;
    ``data`` itself when it has none (the usual case), and any value that is no string,
    dict, list or tuple as it is. Left in, ``json.dumps`` would write one as a ``\\ud800``
    escape, which a strict JSON reader refuses, and pydantic's JSON mode refuses a key
    holding one outright."""
    if isinstance(data, str):
        return replace_lone_surrogates(data)
    if isinstance(data, dict):
        items = [
            (replace_lone_surrogates_in(k), replace_lone_surrogates_in(v)) for k, v in data.items()
        ]
        if all(
            new[0] is old[0] and new[1] is old[1]
            for new, old in zip(items, data.items(), strict=True)
        ):
            return data
        return dict(items)
    if isinstance(data, list | tuple):
        sound = [replace_lone_surrogates_in(item) for item in data]
        if all(new is old for new, old in zip(sound, data, strict=True)):
            return data
        return sound if isinstance(data, list) else tuple(sound)
    return data
