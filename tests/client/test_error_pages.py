"""An error answer that is not the server's JSON — a proxy's page, another program's 404
or 500 — is a one-line :class:`ServerError` that names the URL, says it is no akgentic
server's answer and what to check; never the bare status line ("404: 404 Not Found")."""

from __future__ import annotations

import pytest

from akgentic.client import AkgenticClient, ServerError
from tests.server.stub import StubServer

PAGE = "<html><body><h1>Oops</h1>\n<p>something went wrong</p></body></html>"


@pytest.mark.parametrize("status", [404, 500])
def test_an_error_page_says_to_check_the_base_url(status: int) -> None:
    with (
        StubServer(status, PAGE, "text/html") as stub,
        AkgenticClient(stub.url) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.list_teams()
    error = caught.value
    assert type(error) is ServerError and error.status == status and error.code is None
    assert error.detail.startswith(f"{stub.url}/teams answered {status} ")
    assert "(text/html), which is no akgentic server's answer" in error.detail
    assert error.detail.endswith(
        f"check that {stub.url} is the akgentic server's address, with the path prefix a "
        f"proxy serves it under"
    )
    assert "\n" not in str(error) and "<html>" not in str(error)


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_proxy_with_no_server_behind_it_says_to_start_one(status: int) -> None:
    with (
        StubServer(status, PAGE, "text/html") as stub,
        AkgenticClient(stub.url) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.health()
    error = caught.value
    assert error.status == status
    assert error.detail.startswith(f"{stub.url}/health answered {status} ")
    assert f"check that `akgentic serve` runs behind {stub.url}, then try again" in error.detail
    assert "\n" not in str(error)


def test_the_server_s_own_error_keeps_its_words() -> None:
    """A body with ``detail`` is the server's: its words are the message, as before."""
    body = '{"detail": "internal error abc123; the server\'s log has the details"}'
    with (
        StubServer(500, body, "application/json") as stub,
        AkgenticClient(stub.url) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.list_teams()
    assert str(caught.value) == "500: internal error abc123; the server's log has the details"
