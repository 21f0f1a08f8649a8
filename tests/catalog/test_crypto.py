"""Credentials at rest: AES-256-GCM round trip, tamper detection, the wrong key, the key."""

from __future__ import annotations

import base64
import os

import pytest

from akgentic.catalog import SECRET_KEY_ENV, CredentialError, SecretBox, SecretKeyError
from akgentic.catalog.crypto import generate_key

SECRET = "sk-live-2f9c1e4b7a"
CONTEXT = "catalog instance 'search' (web_search)"


def test_a_sealed_secret_opens_to_itself_and_never_shows_in_the_blob(box: SecretBox) -> None:
    blob = box.seal(SECRET, CONTEXT)
    assert box.open(blob, CONTEXT) == SECRET
    assert SECRET.encode() not in blob
    assert box.seal(SECRET, CONTEXT) != blob  # a fresh nonce each time
    assert box.open(box.seal("ünïcødé ✓", CONTEXT), CONTEXT) == "ünïcødé ✓"


@pytest.mark.parametrize("where", [0, 1, 5, 17, 20, -1])
def test_any_altered_byte_is_an_error_never_garbage(box: SecretBox, where: int) -> None:
    blob = bytearray(box.seal(SECRET, CONTEXT))
    blob[where] ^= 0x01
    with pytest.raises(CredentialError) as caught:
        box.open(bytes(blob), CONTEXT)
    assert SECRET not in str(caught.value)


def test_a_truncated_blob_is_an_error(box: SecretBox) -> None:
    blob = box.seal(SECRET, CONTEXT)
    for cut in (0, 10, len(blob) - 1):
        with pytest.raises(CredentialError, match="set it again|altered"):
            box.open(blob[:cut], CONTEXT)


def test_a_blob_moved_to_another_instance_does_not_open(box: SecretBox) -> None:
    blob = box.seal(SECRET, CONTEXT)
    with pytest.raises(CredentialError, match="altered or it belongs to another instance"):
        box.open(blob, "catalog instance 'other' (web_search)")


def test_the_wrong_key_is_an_error_naming_both_key_ids(box: SecretBox) -> None:
    blob = box.seal(SECRET, CONTEXT)
    other = SecretBox(os.urandom(32))
    with pytest.raises(
        CredentialError, match="encrypted under another AKGENTIC_SECRET_KEY"
    ) as caught:
        other.open(blob, CONTEXT)
    message = str(caught.value)
    assert box.key_id.hex() in message and other.key_id.hex() in message
    assert SECRET not in message


def test_the_key_comes_from_the_environment_as_hex_or_base64() -> None:
    raw = os.urandom(32)
    for text in (
        raw.hex(),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ):
        box = SecretBox.from_env({SECRET_KEY_ENV: f"  {text}\n"})
        assert box.key_id == SecretBox(raw).key_id
    assert len(bytes.fromhex(generate_key())) == 32


def test_a_missing_key_says_how_to_make_one() -> None:
    for environ in ({}, {SECRET_KEY_ENV: "   "}):
        with pytest.raises(SecretKeyError, match="AKGENTIC_SECRET_KEY, which is not set") as caught:
            SecretBox.from_env(environ)
        assert "secrets.token_hex(32)" in str(caught.value)


@pytest.mark.parametrize(
    "text",
    ["short", "zz" * 32, base64.b64encode(os.urandom(16)).decode()],
    ids=["short", "hex-not-base64", "16-bytes"],  # stable names: test processes must agree
)
def test_a_malformed_key_is_refused_without_echoing_it(text: str) -> None:
    with pytest.raises(SecretKeyError, match="must be a 32-byte key") as caught:
        SecretBox.from_env({SECRET_KEY_ENV: text})
    assert text not in str(caught.value)
