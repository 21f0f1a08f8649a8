"""Counting tokens offline: ``count_tokens(text)`` with a real BPE encoding, no download.

The encoding is OpenAI's ``o200k_base`` (GPT-4o and later; ``cl100k_base`` for the GPT-4
generation is available too), from the ``bpe-openai`` package: Rust bindings whose
ranks ship inside the wheel, so counting never touches the network. tiktoken does not
qualify — it downloads its rank files on first use.

Install it with the ``tokens`` extra (``pip install 'akgentic[tokens]'``; the ``dev``
extra has it too). Without it the counter falls back to an estimate — four characters a
token, rounded up, the rule :func:`akgentic.llm.estimate_tokens` uses — and says so:
its ``encoding`` is :data:`ESTIMATE` and ``exact`` is False. A caller that needs real
counts (a benchmark) passes ``exact=True`` and gets an ImportError saying what to install.

Other providers tokenize differently (Anthropic's and Google's tokenizers are not public
offline): an o200k count is a close, stable measure for comparing two prompts, not a
bill.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

__all__ = ["DEFAULT_ENCODING", "ESTIMATE", "TokenCounter", "count_tokens", "token_counter"]

Encoding = Literal["o200k_base", "cl100k_base"]

DEFAULT_ENCODING: Encoding = "o200k_base"
"""The encoding counted with by default (OpenAI's current one)."""

ESTIMATE = "estimate-4-chars"
"""The ``encoding`` a counter reports when bpe-openai is missing: characters / 4."""

INSTALL_HINT = "install it with: pip install 'akgentic[tokens]' (it ships its ranks, no download)"


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens of text with one encoding; ``exact`` False means the 4-chars estimate."""

    encoding: str
    exact: bool
    _encoder: Any = None

    def count(self, text: str) -> int:
        if self._encoder is None:
            return math.ceil(len(text) / 4)
        return len(self._encode(text))

    def _encode(self, text: str) -> list[int]:
        """``text``'s tokens, any length. bpe-openai refuses to encode a million characters,
        or 200,000 tokens, at once (a long conversation is that); longer text is encoded in
        pieces of at most :data:`PIECE_CHARS`, each cut just before a space that follows a
        word, where the encoding splits the text anyway — a count then differs from one
        encoding of the whole by a token at a cut at most, and only where no such space
        was found near it."""
        encode = self._encoder.encode_ordinary
        if len(text) <= PIECE_CHARS:
            return list(encode(text))
        tokens: list[int] = []
        start = 0
        while start < len(text):
            end = min(start + PIECE_CHARS, len(text))
            if end < len(text):
                end = _cut_before_space(text, start, end)
            tokens.extend(encode(text[start:end]))
            start = end
        return tokens

    def count_spans(self, text: str, starts: Sequence[int]) -> list[int]:
        """The tokens of ``text`` split at the character offsets ``starts`` (ascending, the
        first 0): one count per span, summing to ``count(text)`` exactly — ``text`` is
        encoded once and each token counts for the span its first character is in. The
        estimate counts each span on its own (four characters a token)."""
        if not starts or starts[0] != 0 or list(starts) != sorted(starts):
            raise ValueError(f"span starts must ascend from 0, got {list(starts)}")
        if len(starts) == 1:
            return [self.count(text)]
        if self._encoder is None:
            ends = [*starts[1:], len(text)]
            return [math.ceil((end - start) / 4) for start, end in zip(starts, ends, strict=True)]
        _, offsets = self._encoder.decode_with_offsets(self._encode(text))
        counts = [0] * len(starts)
        span = 0
        for offset in offsets:
            while span + 1 < len(starts) and offset >= starts[span + 1]:
                span += 1
            counts[span] += 1
        return counts


PIECE_CHARS = 40_000
"""The most characters encoded at once: at most four tokens a character (a character of
four UTF-8 bytes, each its own token), under bpe-openai's 200,000 tokens."""


def _cut_before_space(text: str, start: int, end: int) -> int:
    """Where to end the piece ``text[start:end]``: before the last space within its last
    1,000 characters that follows a non-space (a boundary of the encoding's pre-split),
    else at ``end``."""
    at = text.rfind(" ", max(start + 1, end - 1000), end)
    while at > start and text[at - 1].isspace():
        at = text.rfind(" ", max(start + 1, end - 1000), at)
    return at if at > start else end


@cache
def _encoder(encoding: str) -> Any:
    with warnings.catch_warnings():  # its rank loader uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module("bpe_openai").get_encoding(encoding)


def token_counter(encoding: Encoding = DEFAULT_ENCODING, *, exact: bool = False) -> TokenCounter:
    """A counter for ``encoding``; the estimate when bpe-openai is missing, unless ``exact``."""
    try:
        return TokenCounter(encoding=encoding, exact=True, _encoder=_encoder(encoding))
    except ImportError as exc:
        if exact:
            raise ImportError(
                f"counting {encoding} tokens needs bpe-openai: {INSTALL_HINT}"
            ) from exc
        return TokenCounter(encoding=ESTIMATE, exact=False)


def count_tokens(text: str, encoding: Encoding = DEFAULT_ENCODING) -> int:
    """The number of ``encoding`` tokens in ``text`` (the estimate without bpe-openai)."""
    return token_counter(encoding).count(text)
