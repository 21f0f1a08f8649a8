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


def test_spans_of_one_encoding_sum_to_the_whole() -> None:
    counter = token_counter()
    text = "You are @A.\n\nSkills:\nplan-work — read before planning.\n\nToolsets: tasks"
    starts = [0, text.index("\n\nSkills"), text.index("\n\nToolsets")]
    counts = counter.count_spans(text, starts)
    assert sum(counts) == counter.count(text)
    assert len(counts) == 3 and all(c > 0 for c in counts)
    assert counter.count_spans(text, [0]) == [counter.count(text)]
    assert counter.count_spans("日本語 é 🙂", [0, 3]) == [
        counter.count("日本語"),
        counter.count("日本語 é 🙂") - counter.count("日本語"),
    ]
    with pytest.raises(ValueError, match="ascend from 0"):
        counter.count_spans(text, [3, 10])
    with pytest.raises(ValueError, match="ascend from 0"):
        counter.count_spans(text, [0, 10, 5])


def test_the_estimate_counts_spans_on_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(encoding: str) -> None:
        raise ImportError("No module named 'bpe_openai'")

    monkeypatch.setattr(tokens_module, "_encoder", missing)
    assert token_counter().count_spans("12345678abc", [0, 8]) == [2, 1]


def test_text_past_what_bpe_openai_encodes_at_once_is_counted_in_pieces() -> None:
    """bpe-openai refuses a million characters (or 200,000 tokens) in one call; a long
    conversation is that. Pieces cut before a space count what one encoding would."""
    counter = token_counter(exact=True)
    sentence = "The actor model keeps each agent's state on its own thread, 日本語 🙂.\n"
    text = sentence * 2_000  # ≈ 142,000 characters: cut into pieces, yet encodable at once
    assert len(text) > tokens_module.PIECE_CHARS
    assert counter.count(text) == len(counter._encoder.encode_ordinary(text))
    long = sentence * 16_000  # ≈ 1.1 million characters: refused in one call
    with pytest.raises(ValueError, match="too long"):
        counter._encoder.encode_ordinary(long)
    assert counter.count(long) == 8 * counter.count(text)
    spans = counter.count_spans(long, [0, 71, len(long) // 2])
    assert sum(spans) == counter.count(long)
    assert counter.count("x" * 1_048_576) > 0  # no space to cut at: cut where it must
