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

import json
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
    """JSON data (what ``json.dumps`` takes) with the lone surrogates of every string in it,
    keys too, replaced as :func:`replace_lone_surrogates` does; ``data`` itself when it has
    none (the usual case: one encoding). Left in, ``json.dumps`` would write one as a
    ``\\ud800`` escape, which a strict JSON reader refuses, and no UTF-8 encoder writes."""
    text = json.dumps(data, ensure_ascii=False)
    sound = replace_lone_surrogates(text)  # only inside JSON strings: it stays JSON
    return data if sound is text else json.loads(sound)
