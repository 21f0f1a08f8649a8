"""The web page's route: served at / (and /web/...) without the token, with a policy that
keeps the page on its own origin; every module it imports is served."""

from __future__ import annotations

import re

import httpx

from akgentic.server import ServerSettings
from akgentic.server.web import STATIC
from tests.server.conftest import Served

SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # a name, never fetched
IMPORT = re.compile(r"""^import .*? from "(\.{1,2}/[^"]+)";""", re.MULTILINE)


def test_the_page_is_served_with_a_same_origin_policy(served: Served) -> None:
    page = httpx.get(f"{served.url}/", timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert '<script type="module" src="/web/js/main.js">' in page.text
    script = httpx.get(f"{served.url}/web/js/main.js", timeout=10)
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert script.headers["x-content-type-options"] == "nosniff"
    assert httpx.get(f"{served.url}/web/nothing.js", timeout=10).status_code == 404
    # not an API route: the schema stays the API's
    assert "/" not in httpx.get(f"{served.url}/openapi.json", timeout=10).json()["paths"]


def test_every_module_the_page_imports_is_served_and_none_is_foreign(served: Served) -> None:
    modules = sorted(STATIC.rglob("*.js"))
    assert modules
    for module in modules:
        text = module.read_text()
        urls = re.findall(r"""["'`]((?:https?:)?//[^"'`]*)""", text)
        assert set(urls) <= {SVG_NAMESPACE}, f"{module} names another origin: {urls}"
        for target in IMPORT.findall(text):
            path = (module.parent / target).resolve().relative_to(STATIC)
            served_file = httpx.get(f"{served.url}/web/{path.as_posix()}", timeout=10)
            assert served_file.status_code == 200, f"{module.name} imports {target}"


def test_a_server_with_a_token_serves_the_page_but_not_the_data(serve_with) -> None:
    guarded = serve_with(ServerSettings(port=0, token="a-long-enough-token"))
    assert httpx.get(f"{guarded.url}/", timeout=10).status_code == 200
    assert httpx.get(f"{guarded.url}/web/app.css", timeout=10).status_code == 200
    assert httpx.get(f"{guarded.url}/teams", timeout=10).status_code == 401
