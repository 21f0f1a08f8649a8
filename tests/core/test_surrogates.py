"""``replace_lone_surrogates_in``: JSON data read back from an older record made sound on
its way out — every string, keys too, with U+FFFD for a lone surrogate, and an
undecodable byte's stand-in decoded again with the bytes around it."""

from __future__ import annotations

import datetime
import json

from akgentic.core.surrogates import replace_lone_surrogates_in


def test_every_string_of_json_data_is_made_sound_keys_included() -> None:
    data = {"why\ud800": ["a\udfff", {"n": 1, "s": "caf\udcc3\udca9"}], "ok": None}
    sound = replace_lone_surrogates_in(data)
    assert sound == {"why\ufffd": ["a\ufffd", {"n": 1, "s": "caf\u00e9"}], "ok": None}
    json.dumps(sound, ensure_ascii=False).encode()  # encodes as UTF-8 now


def test_data_with_no_lone_surrogate_is_returned_itself() -> None:
    data = {"text": "caf\u00e9 \U0001f600", "items": [1, 2.5, True]}
    assert replace_lone_surrogates_in(data) is data


def test_python_data_keeps_its_other_values_and_tuples() -> None:
    """A model dumped as Python data (a datetime, a tuple) is walked, not JSON-encoded."""
    when = datetime.datetime(2026, 12, 4, tzinfo=datetime.UTC)
    sound = replace_lone_surrogates_in({"at": when, "pair": ("x\ud800", 2)})
    assert sound == {"at": when, "pair": ("x\ufffd", 2)}
    assert isinstance(sound["pair"], tuple)
