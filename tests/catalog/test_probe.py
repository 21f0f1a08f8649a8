"""probe(): a reachable and an unreachable endpoint for each shipped type with an outside
exit, a refused credential, the persisted status and time, a probe that misbehaves, a
probe whose instance is removed while it runs, and the CLI's and the API's surface flags."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Literal

import pytest

from akgentic.catalog import (
    CatalogError,
    CatalogService,
    NotEnabledError,
    Principal,
    discover,
    run_probe,
)
from akgentic.storage import open_storage
from akgentic.storage.records import utc_now
from tests.catalog.conftest import ADMIN
from tests.catalog.loopback import Service
from tests.catalog.tooltypes import PROBING, PROCEED, GatedService
from tests.tool.search.tavily_server import serve as serve_tavily

KEY = "qd-key-0a1b2c3d4e"


def test_a_reachable_qdrant_is_active_and_the_outcome_is_kept(
    catalog: CatalogService, service: Service
) -> None:
    service.routes["/collections"] = (200, {"result": {"collections": [{"name": "a"}]}})
    catalog.configure(ADMIN, "vector.qdrant", {"url": service.url})
    catalog.set_credential(ADMIN, "vector.qdrant", KEY)
    before = utc_now()

    view, result = catalog.probe(ADMIN, "vector.qdrant", timeout=5)

    assert result.status == "active"
    assert (
        result.detail.startswith("Qdrant answered HTTP 200 in ")
        and "1 collections" in result.detail
    )
    assert [(path, headers.get("api-key")) for path, headers in service.seen] == [
        ("/collections", KEY)
    ]
    assert view.status == "active" and view.last_check_at is not None
    assert before <= view.last_check_at <= utc_now()
    stored = catalog.show(ADMIN, "vector.qdrant")
    assert (stored.status, stored.status_detail, stored.last_check_at) == (
        "active",
        result.detail,
        view.last_check_at,
    )
    assert [r.action for r in catalog.audit(ADMIN)] == ["configure", "set_credential"]


def test_an_unreachable_endpoint_is_an_error_kept_with_its_time(
    catalog: CatalogService, closed_port: int
) -> None:
    catalog.configure(ADMIN, "vector.qdrant", {"url": f"http://127.0.0.1:{closed_port}"})
    view, result = catalog.probe(ADMIN, "vector.qdrant", timeout=5)
    assert result.status == "error"
    assert result.detail.startswith(
        f"Qdrant at http://127.0.0.1:{closed_port}/collections is unreachable"
    )
    stored = catalog.show(ADMIN, "vector.qdrant")
    assert stored.status == "error" and stored.status_detail == result.detail
    assert stored.last_check_at == view.last_check_at


def test_a_refused_credential_says_so(catalog: CatalogService, service: Service) -> None:
    service.routes["/v1/meta"] = (401, {"error": [{"message": "anonymous access not enabled"}]})
    catalog.configure(ADMIN, "vector.weaviate", {"url": service.url, "grpc_port": 50051})
    catalog.set_credential(ADMIN, "vector.weaviate", "stale-key")
    _, result = catalog.probe(ADMIN, "vector.weaviate", timeout=5)
    assert result.status == "error"
    assert "refused the credential (HTTP 401)" in result.detail
    assert service.seen[0][1].get("Authorization") == "Bearer stale-key"
    assert "stale-key" not in result.detail


def test_a_reachable_weaviate_reports_its_version(
    catalog: CatalogService, service: Service
) -> None:
    service.routes["/v1/meta"] = (200, {"version": "1.30.2", "modules": {}})
    catalog.configure(ADMIN, "vector.weaviate", {"url": service.url + "/"})
    view, result = catalog.probe(ADMIN, "vector.weaviate", timeout=5)
    assert result.status == "active" and result.detail.endswith("; Weaviate 1.30.2")
    assert view.config == {"url": service.url + "/"}  # stored as given, validated


def test_embeddings_endpoints_must_serve_the_configured_model(
    catalog: CatalogService, service: Service, closed_port: int
) -> None:
    service.routes["/v1/models"] = (200, {"data": [{"id": "nomic-embed-text"}, {"id": "llama3"}]})
    catalog.configure(
        ADMIN,
        "embeddings.openai_compatible",
        {"base_url": f"{service.url}/v1", "model": "nomic-embed-text"},
    )
    _, result = catalog.probe(ADMIN, "embeddings.openai_compatible", timeout=5)
    assert result.status == "active" and result.detail.endswith("; serves nomic-embed-text")
    assert "Authorization" not in service.seen[0][1]  # no key set: none sent

    catalog.configure(
        ADMIN, "embeddings.openai_compatible", {"base_url": f"{service.url}/v1", "model": "bge-m3"}
    )
    _, result = catalog.probe(ADMIN, "embeddings.openai_compatible", timeout=5)
    assert result.status == "error"
    assert (
        result.detail
        == "the endpoint does not serve 'bge-m3' (it serves: llama3, nomic-embed-text)"
    )

    catalog.configure(
        ADMIN, "embeddings.openai", {"base_url": f"http://127.0.0.1:{closed_port}/v1"}
    )
    _, result = catalog.probe(ADMIN, "embeddings.openai", timeout=5)
    assert result.status == "error" and result.detail.startswith("no api_key is set")
    catalog.set_credential(ADMIN, "embeddings.openai", "sk-test-123")
    _, result = catalog.probe(ADMIN, "embeddings.openai", timeout=5)
    assert result.status == "error" and "is unreachable" in result.detail


def test_a_probe_that_ignores_its_timeout_is_given_up(catalog: CatalogService) -> None:
    started = utc_now()
    view, result = catalog.probe(ADMIN, "hanging", timeout=0.2)
    assert result.status == "error"
    assert result.detail == "the probe did not finish within 0.2 s"
    assert view.last_check_at is not None and view.last_check_at - started < timedelta(seconds=60)


def test_the_secret_is_scrubbed_from_what_a_probe_says(catalog: CatalogService) -> None:
    catalog.set_credential(ADMIN, "leaky", "tok-SECRET-42")
    _, result = catalog.probe(ADMIN, "leaky", timeout=5)
    assert result.status == "error"
    assert result.detail == "RuntimeError: the server rejected token *** (twice: ***)"
    assert "tok-SECRET-42" not in catalog.show(ADMIN, "leaky").model_dump_json()


@pytest.mark.parametrize("key", ["qd\\key-0a1b2c ", "qd\tkey-0a1b2c "])
def test_a_secret_an_error_quotes_escaped_is_scrubbed_too(
    catalog: CatalogService, service: Service, key: str
) -> None:
    # a pasted key with a backslash or a tab and a trailing blank: httpx refuses the
    # header as "Illegal header value b'...'", which writes the key escaped
    catalog.configure(ADMIN, "vector.qdrant", {"url": service.url})
    catalog.set_credential(ADMIN, "vector.qdrant", key)

    _, result = catalog.probe(ADMIN, "vector.qdrant", timeout=5)

    assert result.status == "error" and "Illegal header value b'***'" in result.detail
    shown = catalog.show(ADMIN, "vector.qdrant").model_dump_json()
    for spelling in (key, key.strip(), repr(key)[1:-1], repr(key.encode())[2:-1]):
        assert spelling not in result.detail and spelling not in shown


def test_run_probe_reports_instead_of_raising() -> None:
    def fails(timeout: float) -> str:
        raise ValueError("boom\non two lines")

    def answers(timeout: float) -> str:
        return f"pong within {timeout}"

    assert run_probe(fails, 1).detail == "ValueError: boom on two lines"
    ok = run_probe(answers, 3)
    assert (ok.status, ok.detail) == ("active", "pong within 3")
    with pytest.raises(Exception):  # noqa: B017 — the result is frozen
        ok.status = "error"  # type: ignore[misc]


def test_web_search_refused_and_unreachable_are_errors_kept_without_the_key(
    catalog: CatalogService, closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    catalog.configure(ADMIN, "web_search", {"api_base_url": f"http://127.0.0.1:{closed_port}"})
    _, result = catalog.probe(ADMIN, "web_search", timeout=5)
    assert (result.status, result.detail) == (
        "error",
        "no api_key is set: akgentic catalog set-credential web_search",
    )
    catalog.set_credential(ADMIN, "web_search", "tvly-stale-77")
    _, result = catalog.probe(ADMIN, "web_search", timeout=5)
    assert result.status == "error"
    assert result.detail.startswith(
        f"SearchUnavailableError: cannot reach http://127.0.0.1:{closed_port}: "
    )
    with serve_tavily() as tavily:
        catalog.configure(ADMIN, "web_search", {"api_base_url": tavily.url})
        view, result = catalog.probe(ADMIN, "web_search", timeout=5)
    assert result.detail == (
        "SearchUnavailableError: Tavily refused the API key set in the catalog (401: "
        "Unauthorized: missing or invalid API key.)"
    )
    assert view.status == "error" and "tvly-stale-77" not in view.model_dump_json()
    assert [auth for _, _, auth in tavily.requests] == ["Bearer tvly-stale-77"]


@pytest.fixture
def two_processes(storage_url: str) -> Iterator[tuple[CatalogService, CatalogService]]:
    """Two catalogs on one store, each with its own connection, as two processes have:
    one probes the instance ``gated``, the other administers it meanwhile."""
    registry = discover(entry_point_group=None, extra=[GatedService])
    stores = [open_storage(storage_url), open_storage(storage_url)]
    yield CatalogService(stores[0], registry=registry), CatalogService(stores[1], registry=registry)
    PROCEED.set()  # a probe left waiting answers before its store closes
    for store in stores:
        store.close()


@pytest.mark.parametrize(
    ("meanwhile", "words"),
    [
        ("nothing", None),
        ("remove", "catalog instance 'gated' was removed while the probe ran: its outcome was "
         "not kept"),
        ("remove and enable", "catalog instance 'gated' was removed while the probe ran, and "
         "set up again since: its outcome was not kept (probe it again)"),
        ("configure", "catalog instance 'gated' was configured while the probe ran (its "
         "config or credential changed): the outcome was not kept; probe it again"),
    ],
)  # fmt: skip
def test_a_probe_in_flight_keeps_its_outcome_on_the_row_it_probed_only(
    two_processes: tuple[CatalogService, CatalogService], meanwhile: str, words: str | None
) -> None:
    """The probe reads the row, then is held (PROBING) until the test has done
    ``meanwhile`` through another connection and lets it answer (PROCEED): a row removed
    meanwhile is not brought back, a row made again under the name is left unprobed, and
    the probe says so in one line."""
    prober, admin = two_processes
    prober.enable(ADMIN, "gated", ["agents"])
    outcome: list[object] = []

    def probe() -> None:
        try:
            outcome.append(prober.probe(ADMIN, "gated", timeout=30))
        except CatalogError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=probe)
    thread.start()
    assert PROBING.wait(timeout=30), "the probe never ran"
    if meanwhile in ("remove", "remove and enable"):
        assert admin.remove(ADMIN, "gated", force=True)
    if meanwhile == "remove and enable":
        admin.enable(ADMIN, "gated", ["cli"])
    if meanwhile == "configure":
        admin.configure(ADMIN, "gated", {"note": "changed"}, merge=True)
    PROCEED.set()
    thread.join(timeout=30)
    assert not thread.is_alive()

    [said] = outcome
    stored = admin.storage.catalog.get("gated")
    if words is None:
        assert isinstance(said, tuple) and said[1].detail == "let through"
        assert stored is not None and (stored.status, stored.status_detail) == (
            "active",
            "let through",
        )
        return
    assert isinstance(said, CatalogError) and str(said) == words
    if meanwhile == "remove":
        assert stored is None and prober.storage.catalog.get("gated") is None
    elif meanwhile == "configure":  # the row, as configured: not probed with it
        assert stored is not None and stored.config == {"note": "changed"}
        assert (stored.status, stored.last_check_at) == ("unchecked", None)
    else:  # the new row, as the admin made it: not probed
        assert stored is not None and stored.enabled_cli and not stored.enabled_agents
        assert (stored.status, stored.last_check_at) == ("unchecked", None)
    assert [line.action for line in admin.audit(ADMIN)] == {
        "remove": ["enable", "remove"],
        "remove and enable": ["enable", "remove", "enable"],
        "configure": ["enable", "configure"],
    }[meanwhile]


@pytest.mark.parametrize("via", ["cli", "api"])
def test_a_probe_through_a_surface_needs_the_instance_enabled_there(
    catalog: CatalogService, service: Service, via: Literal["cli", "api"]
) -> None:
    """A probe asked through the CLI or the HTTP API is that surface's use of the
    instance: refused (NotEnabledError, the command that enables it) while its flag is
    off, before the credential is opened. Administering is not gated; Python code is on
    no surface."""
    service.routes["/collections"] = (200, {"result": {"collections": []}})
    who, other = Principal(name="bob", via=via), "api" if via == "cli" else "cli"
    with pytest.raises(NotEnabledError) as no_row:
        catalog.probe(who, "vector.qdrant", timeout=5)  # no row: every flag off
    assert str(no_row.value).startswith(
        f"catalog tool 'vector.qdrant' is not enabled for {via}: "
        f"akgentic catalog enable vector.qdrant --surface {via}"
    )
    catalog.configure(who, "vector.qdrant", {"url": service.url})
    catalog.set_credential(who, "vector.qdrant", KEY)
    catalog.enable(who, "vector.qdrant", ["agents", other])
    with pytest.raises(NotEnabledError, match=f"not enabled for {via}"):
        catalog.probe(who, "vector.qdrant", timeout=5)
    assert service.seen == [] and catalog.show(who, "vector.qdrant").status == "unchecked"

    catalog.enable(who, "vector.qdrant", [via])
    _, result = catalog.probe(who, "vector.qdrant", timeout=5)
    assert result.status == "active" and len(service.seen) == 1

    catalog.disable(who, "vector.qdrant")
    _, result = catalog.probe(ADMIN, "vector.qdrant", timeout=5)  # python: no surface
    assert result.status == "active" and len(service.seen) == 2
    with pytest.raises(NotEnabledError):
        catalog.probe(who, "vector.qdrant", timeout=5)
    assert len(service.seen) == 2
