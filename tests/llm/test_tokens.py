"""count_tokens: real o200k / cl100k counts offline, and the declared fallback."""

from __future__ import annotations

import pytest

from akgentic.llm import count_tokens, token_counter
from akgentic.llm import tokens as tokens_module


def test_counts_match_the_published_encodings() -> None:
    # tiktoken's own documented examples for these two encodings
    assert count_tokens("tiktoken is great!") == 6
    assert count_tokens("hello world", "cl100k_base") == 2
    counter = token_counter()
    assert (counter.encoding, counter.exact) == ("o200k_base", True)
    assert counter.count("") == 0


def test_without_bpe_openai_the_counter_estimates_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(encoding: str) -> None:
        raise ImportError("No module named 'bpe_openai'")

    monkeypatch.setattr(tokens_module, "_encoder", missing)
    counter = token_counter()
    assert (counter.encoding, counter.exact) == (tokens_module.ESTIMATE, False)
    assert counter.count("12345678") == 2 and counter.count("123456789") == 3
    assert count_tokens("abcd") == 1
    with pytest.raises(ImportError, match=r"pip install 'akgentic\[tokens\]'"):
        token_counter(exact=True)
