"""The catalog store's contract (``StorageBundle.catalog``), on every backend.

The ``backend`` fixture (conftest) runs each test on memory, SQLite and — when
``AKGENTIC_TEST_POSTGRES_URL`` is set — Postgres.
"""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime, timedelta

import pytest

from akgentic.storage import (
    CatalogAuditEntry,
    ConfigChangedError,
    InstanceGoneError,
    InstanceTypeError,
    ProbedWith,
    StorageBundle,
    StorageClosedError,
)
from tests.storage.conftest import Backend


def by(actor: str, action: str, **detail: object) -> CatalogAuditEntry:
    return CatalogAuditEntry(actor=actor, action=action, detail=dict(detail))


def test_a_row_is_created_by_its_first_change_with_everything_off(store: StorageBundle) -> None:
    catalog = store.catalog
    assert catalog.list() == [] and catalog.get("search") is None

    record = catalog.set_enabled("search", "web_search", {"agents": True}, by("ann", "enable"))

    assert record.name == "search" and record.type_name == "web_search"
    assert (record.enabled_agents, record.enabled_api, record.enabled_cli) == (True, False, False)
    assert record.config == {} and record.credential_enc is None and not record.credential_set
    assert record.status == "unchecked" and record.last_check_at is None
    assert record.created_at.tzinfo is not None and record.updated_at >= record.created_at
    assert catalog.get("search") == record

    catalog.set_config("fetch", "fetch_url", {"timeout": 5}, by("ann", "configure"))
    catalog.set_enabled("alpha", "web_search", {"cli": False}, by("ann", "disable"))
    assert [r.name for r in catalog.list()] == ["alpha", "fetch", "search"]
    assert not any(catalog.get("alpha").enabled_on(s) for s in ("agents", "api", "cli"))  # type: ignore[union-attr]


def test_flags_change_only_for_the_surfaces_named(store: StorageBundle) -> None:
    catalog = store.catalog
    catalog.set_enabled("s", "web_search", {"agents": True, "api": True}, by("a", "enable"))
    record = catalog.set_enabled("s", "web_search", {"api": False, "cli": True}, by("a", "x"))
    assert (record.enabled_agents, record.enabled_api, record.enabled_cli) == (True, False, True)
    assert record.enabled_on("cli") and not record.enabled_on("api")
    with pytest.raises(ValueError, match="unknown surface"):
        record.enabled_on("chat")


def test_unknown_or_no_surfaces_are_refused_and_store_nothing(store: StorageBundle) -> None:
    catalog = store.catalog
    with pytest.raises(ValueError, match="unknown: 'chat'"):
        catalog.set_enabled("s", "web_search", {"chat": True}, by("a", "enable"))
    with pytest.raises(ValueError, match="at least one of agents, api, cli"):
        catalog.set_enabled("s", "web_search", {}, by("a", "enable"))
    assert catalog.list() == [] and catalog.audit() == []


def test_config_is_replaced_whole_and_stored_as_a_snapshot(store: StorageBundle) -> None:
    catalog = store.catalog
    config = {"provider": "tavily", "options": {"depth": 2}}
    catalog.set_config("s", "web_search", config, by("a", "configure"))
    config["provider"] = "changed after the call"
    assert catalog.get("s").config == {"provider": "tavily", "options": {"depth": 2}}  # type: ignore[union-attr]

    record = catalog.set_config("s", "web_search", {"provider": "brave"}, by("a", "configure"))
    assert record.config == {"provider": "brave"}
    with pytest.raises(TypeError, match="JSON"):
        catalog.set_config("s", "web_search", {"when": object()}, by("a", "configure"))
    assert catalog.get("s").config == {"provider": "brave"}  # type: ignore[union-attr]


def test_the_credential_is_opaque_bytes_kept_exactly_and_cleared_by_none(
    store: StorageBundle,
) -> None:
    catalog = store.catalog
    blob = bytes(range(256))  # every byte value, NUL included
    record = catalog.set_credential("s", "web_search", blob, by("a", "set_credential"))
    assert record.credential_enc == blob and record.credential_set
    assert catalog.get("s").credential_enc == blob  # type: ignore[union-attr]
    assert "credential_enc" not in repr(record)

    cleared = catalog.set_credential("s", "web_search", None, by("a", "clear_credential"))
    assert cleared.credential_enc is None and not cleared.credential_set


def test_a_probe_outcome_is_kept_without_an_audit_line(store: StorageBundle) -> None:
    catalog = store.catalog
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    record = catalog.record_probe(
        "q", "vector.qdrant", "error", "unreachable", when, row_id=None
    )  # it probed no row: one is created
    assert (record.status, record.status_detail, record.last_check_at) == (
        "error",
        "unreachable",
        when,
    )
    assert not record.enabled_agents  # created by the probe, still off
    later = when + timedelta(minutes=5)
    record = catalog.record_probe(
        "q", "vector.qdrant", "active", "HTTP 200", later, row_id=record.row_id
    )
    assert (record.status, record.last_check_at) == ("active", later)
    assert catalog.audit() == []
    with pytest.raises(ValueError, match="'active' or 'error'"):
        catalog.record_probe("q", "vector.qdrant", "unchecked", "", later, row_id=record.row_id)


def test_a_name_keeps_its_type_and_a_mismatch_changes_nothing(store: StorageBundle) -> None:
    catalog = store.catalog
    before = catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable"))
    attempts = [
        lambda: catalog.set_enabled("s", "fetch_url", {"agents": False}, by("b", "disable")),
        lambda: catalog.set_config("s", "fetch_url", {"x": 1}, by("b", "configure")),
        lambda: catalog.set_credential("s", "fetch_url", b"k", by("b", "set_credential")),
        lambda: catalog.record_probe(
            "s", "fetch_url", "active", "", datetime.now(UTC), row_id=before.row_id
        ),
        lambda: catalog.record_probe(
            "s", "fetch_url", "active", "", datetime.now(UTC), row_id=None
        ),
    ]
    for attempt in attempts:
        with pytest.raises(InstanceTypeError, match="'s' is of type 'web_search', not 'fetch_url'"):
            attempt()
    assert catalog.get("s") == before
    assert [line.action for line in catalog.audit()] == ["enable"]


def test_every_change_appends_its_audit_line_in_order(store: StorageBundle) -> None:
    catalog = store.catalog
    catalog.set_enabled(
        "s", "web_search", {"agents": True}, by("ann", "enable", surfaces=["agents"])
    )
    catalog.set_credential(
        "s", "web_search", b"\x01cipher", by("bob", "set_credential", credential="set")
    )
    catalog.set_config(
        "f", "fetch_url", {"timeout": 3}, by("cli:ann", "configure", config={"timeout": 3})
    )
    catalog.set_enabled("s", "web_search", {"agents": False}, by("ann", "disable"))

    trail = catalog.audit()
    assert [(r.actor, r.action, r.instance, r.type_name) for r in trail] == [
        ("ann", "enable", "s", "web_search"),
        ("bob", "set_credential", "s", "web_search"),
        ("cli:ann", "configure", "f", "fetch_url"),
        ("ann", "disable", "s", "web_search"),
    ]
    assert [r.detail for r in trail[:3]] == [
        {"surfaces": ["agents"]},
        {"credential": "set"},
        {"config": {"timeout": 3}},
    ]
    seqs = [r.seq for r in trail]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4
    assert all(r.at.tzinfo is not None for r in trail)
    assert all(a.at <= b.at for a, b in itertools.pairwise(trail))

    assert [r.action for r in catalog.audit("s")] == ["enable", "set_credential", "disable"]
    assert [r.action for r in catalog.audit(limit=2)] == ["configure", "disable"]
    assert [r.action for r in catalog.audit("s", limit=1)] == ["disable"]
    assert catalog.audit(limit=0) == [] and catalog.audit("nobody") == []
    with pytest.raises(ValueError, match="limit"):
        catalog.audit(limit=-1)


def test_a_change_whose_audit_line_cannot_be_stored_is_not_made(store: StorageBundle) -> None:
    catalog = store.catalog
    with pytest.raises(TypeError, match="JSON"):
        catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable", bad=object()))
    assert catalog.get("s") is None and catalog.audit() == []


def test_remove_drops_the_row_and_audits_it(store: StorageBundle) -> None:
    catalog = store.catalog
    catalog.set_config("gone", "uninstalled.tool", {"a": 1}, by("a", "configure"))
    assert catalog.remove("gone", by("admin", "remove")) is True
    assert catalog.get("gone") is None
    assert catalog.remove("gone", by("admin", "remove")) is False
    assert [(r.action, r.type_name) for r in catalog.audit()] == [
        ("configure", "uninstalled.tool"),
        ("remove", "uninstalled.tool"),
    ]


def test_a_row_keeps_its_identity_and_a_row_made_again_has_another(store: StorageBundle) -> None:
    catalog = store.catalog
    first = catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable"))
    assert first.row_id
    changed = [
        catalog.set_config("s", "web_search", {"x": 1}, by("a", "configure")),
        catalog.set_credential("s", "web_search", b"k", by("a", "set_credential")),
        catalog.record_probe(
            "s", "web_search", "active", "", datetime.now(UTC), row_id=first.row_id
        ),
    ]
    assert {r.row_id for r in changed} == {first.row_id} == {catalog.get("s").row_id}  # type: ignore[union-attr]
    catalog.remove("s", by("a", "remove"))
    again = catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable"))
    assert again.row_id and again.row_id != first.row_id
    assert catalog.set_enabled("t", "web_search", {"api": True}, by("a", "enable")).row_id not in (
        first.row_id,
        again.row_id,
    )


def test_a_probe_outcome_is_kept_on_the_row_it_probed_only(backend: Backend) -> None:
    """A probe reads a row, runs, writes: the write names the row it read (``row_id``,
    None for none), and one statement decides. A row removed meanwhile is not made again;
    a row made again under the name, or made where none was read, is left as it is."""
    catalog, other = backend.store.catalog, backend.another().catalog
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    read = catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable"))
    other.remove("s", by("b", "remove"))
    with pytest.raises(InstanceGoneError) as gone:
        catalog.record_probe("s", "web_search", "active", "ok", when, row_id=read.row_id)
    assert str(gone.value) == (
        "catalog instance 's' was removed while the probe ran: its outcome was not kept"
    )
    assert catalog.get("s") is None and other.get("s") is None

    read = catalog.set_enabled("s", "web_search", {"agents": True}, by("a", "enable"))
    other.remove("s", by("b", "remove"))
    made = other.set_enabled("s", "web_search", {"cli": True}, by("b", "enable"))
    with pytest.raises(InstanceGoneError, match="removed while the probe ran, and set up again"):
        catalog.record_probe("s", "web_search", "error", "down", when, row_id=read.row_id)
    assert catalog.get("s") == made  # untouched: still unchecked

    other.set_enabled("t", "web_search", {"cli": True}, by("b", "enable"))  # none was read
    with pytest.raises(InstanceGoneError, match="'t' was set up while the probe ran"):
        catalog.record_probe("t", "web_search", "active", "ok", when, row_id=None)
    assert catalog.get("t").status == "unchecked"  # type: ignore[union-attr]
    assert [line.action for line in catalog.audit()] == ["enable", "remove"] * 2 + ["enable"] * 2


def test_a_probe_outcome_is_not_kept_when_its_config_or_credential_changed(
    backend: Backend,
) -> None:
    """A probe ran with the config and credential it read (``probed_with``): a
    ``configure`` or ``set-credential`` that lands meanwhile (another connection) makes its
    outcome say nothing of what is stored, so it is not written; with both unchanged —
    whatever else changed, a flag — it is."""
    catalog, other = backend.store.catalog, backend.another().catalog
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    catalog.set_config("s", "web_search", {"url": "http://a"}, by("a", "configure"))
    read = catalog.set_credential("s", "web_search", b"old", by("a", "set_credential"))
    probed = ProbedWith(config=read.config, credential_enc=read.credential_enc)

    other.set_config("s", "web_search", {"url": "http://b"}, by("b", "configure"))
    with pytest.raises(ConfigChangedError) as changed:
        catalog.record_probe(
            "s", "web_search", "active", "ok", when, row_id=read.row_id, probed_with=probed
        )
    assert str(changed.value) == (
        "catalog instance 's' was configured while the probe ran (its config or credential "
        "changed): the outcome was not kept; probe it again"
    )
    other.set_config("s", "web_search", {"url": "http://a"}, by("b", "configure"))
    other.set_credential("s", "web_search", b"new", by("b", "set_credential"))
    with pytest.raises(ConfigChangedError):
        catalog.record_probe(
            "s", "web_search", "active", "ok", when, row_id=read.row_id, probed_with=probed
        )
    other.set_credential("s", "web_search", None, by("b", "clear_credential"))
    with pytest.raises(ConfigChangedError):
        catalog.record_probe(
            "s", "web_search", "active", "ok", when, row_id=read.row_id, probed_with=probed
        )
    assert other.get("s").status == "unchecked"  # type: ignore[union-attr]

    other.set_credential("s", "web_search", b"old", by("b", "set_credential"))
    other.set_enabled("s", "web_search", {"cli": True}, by("b", "enable"))
    kept = catalog.record_probe(
        "s", "web_search", "error", "down", when, row_id=read.row_id, probed_with=probed
    )
    assert (kept.status, kept.status_detail, kept.enabled_cli) == ("error", "down", True)
    cleared = other.set_credential("s", "web_search", None, by("b", "clear_credential"))
    kept = catalog.record_probe(
        "s",
        "web_search",
        "active",
        "ok",
        when,
        row_id=read.row_id,
        probed_with=ProbedWith(config=cleared.config, credential_enc=None),
    )
    assert kept.status == "active"


def test_concurrent_changes_to_one_new_row_lose_nothing(backend: Backend) -> None:
    """Six writers (threads; other connections for the SQL stores) turn on different
    flags and set the config of one row that does not exist yet: one row, every change."""
    stores = [backend.store] + [backend.another() for _ in range(2)]
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def write(i: int) -> None:
        catalog = stores[i % len(stores)].catalog
        start.wait(timeout=30)
        try:
            if i < 3:
                surface = ("agents", "api", "cli")[i]
                catalog.set_enabled("s", "web_search", {surface: True}, by(f"w{i}", "enable"))
            else:
                catalog.set_credential("s", "web_search", bytes([i]), by(f"w{i}", "set_credential"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    record = backend.store.catalog.get("s")
    assert record is not None
    assert (record.enabled_agents, record.enabled_api, record.enabled_cli) == (True, True, True)
    assert record.credential_enc in {bytes([3]), bytes([4]), bytes([5])}
    assert sorted(r.actor for r in backend.store.catalog.audit()) == [f"w{i}" for i in range(6)]


def test_a_config_set_on_an_expected_one_is_written_only_while_it_is_stored(
    backend: Backend,
) -> None:
    """``expected``: the config a merge was made on (``{}`` for no row); another writer's
    change since then makes the write a ``ConfigChangedError`` that writes nothing."""
    catalog, other = backend.store.catalog, backend.another().catalog
    catalog.set_config("s", "web_search", {"a": 1}, by("a", "configure"), expected={})
    other.set_config("s", "web_search", {"a": 1, "b": 2}, by("b", "configure"))
    with pytest.raises(ConfigChangedError, match="'s' changed while a change was made on it"):
        catalog.set_config(
            "s", "web_search", {"a": 1, "c": 3}, by("a", "configure"), expected={"a": 1}
        )
    with pytest.raises(ConfigChangedError):
        catalog.set_config("t", "web_search", {"c": 3}, by("a", "configure"), expected={"x": 1})
    assert catalog.get("s").config == {"a": 1, "b": 2} and catalog.get("t") is None  # type: ignore[union-attr]
    assert [r.actor for r in catalog.audit()] == ["a", "b"]

    record = catalog.set_config(
        "s", "web_search", {"a": 1, "b": 2, "c": 3}, by("a", "configure"), expected={"a": 1, "b": 2}
    )
    assert record.config == {"a": 1, "b": 2, "c": 3}
    with pytest.raises(InstanceTypeError):  # the type is checked as before
        catalog.set_config("s", "fetch_url", {}, by("a", "configure"), expected=record.config)


def test_another_connection_sees_the_catalog(backend: Backend) -> None:
    backend.store.catalog.set_credential("s", "web_search", b"\x00\xffz", by("a", "set_credential"))
    other = backend.another()
    record = other.catalog.get("s")
    assert record is not None and record.credential_enc == b"\x00\xffz"
    assert [r.action for r in other.catalog.audit()] == ["set_credential"]


def test_a_closed_store_refuses_catalog_calls(store: StorageBundle) -> None:
    store.close()
    calls = [
        lambda: store.catalog.list(),
        lambda: store.catalog.get("s"),
        lambda: store.catalog.set_enabled("s", "t", {"agents": True}, by("a", "enable")),
        lambda: store.catalog.audit(),
    ]
    for call in calls:
        with pytest.raises(StorageClosedError):
            call()
