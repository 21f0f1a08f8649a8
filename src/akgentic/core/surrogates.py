"""Text every layer can encode: lone surrogates become U+FFFD where text enters a team.

A Python string may hold a lone surrogate: argv bytes that are not UTF-8 arrive as
U+DC80..U+DCFF, and ``json.loads('"\\udce9"')`` makes one, so a request body, a tool's
output or a server's answer can carry it. No UTF-8 encoder accepts it: pydantic refuses
it in a request body, and a model request or an event holding it cannot be serialized,
so the turn fails — and, the message being stored, fails again on a resume. Text is
made sound once, where it enters (a person's message or command, a tool's return), with
:func:`replace_lone_surrogates`; the store keeps whatever it is given (``_codec``)."""

from __future__ import annotations

import re

__all__ = ["replace_lone_surrogates"]

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
