"""Credentials at rest: AES-256-GCM under the deployment's key (``AKGENTIC_SECRET_KEY``).

The key is 32 random bytes, given as 64 hex digits or as base64; generate one with
``python3 -c "import secrets; print(secrets.token_hex(32))"`` and keep it — a credential
sealed under one key opens under that key only. It is read when a credential is sealed or
opened, never at import: a deployment without credentials needs no key.

A sealed blob is ``version (1) · key id (4) · nonce (12) · ciphertext+tag``. The key id
(an HMAC of a constant under the key) tells "sealed under another key" apart from "the
bytes were altered"; both are a :class:`CredentialError`, never garbage, because GCM
authenticates every byte. The ``context`` (the instance's name and type) is bound as
associated data, so a blob copied onto another row does not open there.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from akgentic.catalog.errors import CredentialError, SecretKeyError

__all__ = ["SECRET_KEY_ENV", "SecretBox", "generate_key"]

SECRET_KEY_ENV = "AKGENTIC_SECRET_KEY"
_VERSION = 1
_KEY_ID_BYTES = 4
_NONCE_BYTES = 12
_HEADER = 1 + _KEY_ID_BYTES + _NONCE_BYTES
_GENERATE = 'python3 -c "import secrets; print(secrets.token_hex(32))"'


def generate_key() -> str:
    """A fresh key, as the 64 hex digits ``AKGENTIC_SECRET_KEY`` takes."""
    return secrets.token_hex(32)


def _parse_key(text: str) -> bytes:
    text = text.strip()
    if len(text) == 64:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    try:
        padded = text + "=" * (-len(text) % 4)
        decoded = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) == 32:
        return decoded
    raise SecretKeyError(
        f"{SECRET_KEY_ENV} must be a 32-byte key written as 64 hex digits or as base64 "
        f"(it has {len(text)} characters and is neither); generate one with: {_GENERATE}"
    )


class SecretBox:
    """Seals and opens short secrets with one AES-256-GCM key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise SecretKeyError(f"an AES-256 key is 32 bytes, got {len(key)}")
        self._aead = AESGCM(key)
        self.key_id = hmac.new(key, b"akgentic.catalog key id", hashlib.sha256).digest()[
            :_KEY_ID_BYTES
        ]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SecretBox:
        """The box of ``AKGENTIC_SECRET_KEY``; :class:`SecretKeyError` saying how to set it
        when it is missing, empty or not a 32-byte key."""
        env = os.environ if environ is None else environ
        text = env.get(SECRET_KEY_ENV, "").strip()
        if not text:
            raise SecretKeyError(
                f"catalog credentials are encrypted with {SECRET_KEY_ENV}, which is not set: "
                f"generate a key with {_GENERATE}, export {SECRET_KEY_ENV}=<the key> "
                f"wherever the catalog is used, and keep it (credentials sealed under one "
                f"key open under that key only)"
            )
        return cls(_parse_key(text))

    def seal(self, secret: str, context: str) -> bytes:
        """``secret`` encrypted and authenticated, bound to ``context``."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, secret.encode("utf-8"), context.encode("utf-8"))
        return bytes([_VERSION]) + self.key_id + nonce + sealed

    def open(self, blob: bytes, context: str) -> str:
        """The secret sealed in ``blob`` for ``context``; :class:`CredentialError` when it
        was sealed under another key, altered, or sealed for another context."""
        if len(blob) < _HEADER + 16 or blob[0] != _VERSION:
            raise CredentialError(
                f"the stored credential of {context} is not a sealed credential of this "
                f"version: set it again"
            )
        key_id = blob[1 : 1 + _KEY_ID_BYTES]
        if not hmac.compare_digest(key_id, self.key_id):
            raise CredentialError(
                f"the stored credential of {context} was encrypted under another "
                f"{SECRET_KEY_ENV} (key id {key_id.hex()}, this key is {self.key_id.hex()}): "
                f"set the key it was stored with, or set the credential again"
            )
        nonce = blob[1 + _KEY_ID_BYTES : _HEADER]
        try:
            plain = self._aead.decrypt(nonce, blob[_HEADER:], context.encode("utf-8"))
        except InvalidTag:
            raise CredentialError(
                f"the stored credential of {context} does not authenticate: its bytes were "
                f"altered or it belongs to another instance; set the credential again"
            ) from None
        return plain.decode("utf-8")
