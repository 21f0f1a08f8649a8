"""A client is given a server URL it can use, or refuses it at once saying the form
expected — not "cannot reach http::" (or httpx's ``InvalidURL``) at the first call."""

from __future__ import annotations

import pytest

from akgentic.client import AkgenticClient


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080", "https://teams.example.com/akgentic/", "http://[::1]:1"]
)
def test_a_server_url_is_taken_as_given(url: str) -> None:
    with AkgenticClient(url) as client:
        assert client.base_url == url.rstrip("/")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://256.1.1.1:1", "invalid IPv4 address: '256.1.1.1'"),
        ("http://[::1", "invalid port: ':1'"),
        ("http://", "it names no host"),
        ("ftp://host", "it does not start with http:// or https://"),
        ("http://host:0", "the port must be 1 to 65535, not 0"),
    ],
)
def test_a_url_that_names_no_server_is_refused_saying_the_form_expected(url: str, why: str) -> None:
    with pytest.raises(ValueError) as refused:
        AkgenticClient(url)
    assert str(refused.value) == (
        f"{url!r} is not a server URL ({why}): give it as http://HOST:PORT (or https://HOST:PORT)"
    )
