"""The service facade: listing, the audited admin actions, credentials shown as "set",
names and types, resolving an instance for agents."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import pytest

from akgentic.catalog import (
    CatalogError,
    CatalogService,
    ConfigError,
    CredentialError,
    NotEnabledError,
    Principal,
    SecretBox,
    SecretKeyError,
    UnknownToolError,
)
from akgentic.catalog.builtin import QdrantServer
from akgentic.storage import SqliteStorage
from tests.catalog.conftest import ADMIN
from tests.catalog.tooltypes import VaultTool, key_digest

SECRET = "vault-key-7f3a91c0d2"
BOB = Principal(name="bob", via="api")


def test_the_list_is_the_live_registry_with_every_flag_off(catalog: CatalogService) -> None:
    listing = catalog.list(ADMIN)
    views = {v.name: v for v in listing.tools}
    assert {"vault", "planning", "vector.qdrant"} <= set(views)
    vault = views["vault"]
    assert (vault.kind, vault.configured, vault.enabled, vault.credential_set) == (
        "card",
        False,
        [],
        False,
    )
    assert (vault.credential_kind, vault.access, vault.status) == ("api_key", "write", "unchecked")
    assert views["vector.qdrant"].kind == "service" and views["vector.qdrant"].probe
    assert listing.orphaned == [] and listing.problems == []
    assert catalog.storage.catalog.list() == []  # listing creates no row


def test_admin_actions_are_audited_with_who_what_and_never_the_secret(
    catalog: CatalogService,
) -> None:
    catalog.enable(ADMIN, "vault")
    catalog.configure(BOB, "vault", {"label": "east"})
    view = catalog.set_credential(ADMIN, "vault", SECRET)
    catalog.enable(BOB, "vault", ["api", "cli"])
    catalog.disable(ADMIN, "vault", ["cli"])
    catalog.set_credential(BOB, "vault", None)
    catalog.disable(ADMIN, "vault")

    assert view.credential_set and SECRET not in view.model_dump_json()
    trail = catalog.audit(ADMIN)
    assert [(r.actor, r.action, r.detail) for r in trail] == [
        ("python:ann", "enable", {"surfaces": ["agents"]}),
        ("api:bob", "configure", {"config": {"label": "east"}}),
        ("python:ann", "set_credential", {"credential": "set"}),
        ("api:bob", "enable", {"surfaces": ["api", "cli"]}),
        ("python:ann", "disable", {"surfaces": ["cli"]}),
        ("api:bob", "set_credential", {"credential": "cleared"}),
        ("python:ann", "disable", {"surfaces": ["agents", "api", "cli"]}),
    ]
    assert all(r.instance == "vault" and r.type_name == "vault" for r in trail)
    assert SECRET not in "".join(r.model_dump_json() for r in trail)
    assert [r.action for r in catalog.audit(ADMIN, "vault", limit=2)] == [
        "set_credential",
        "disable",
    ]
    final = catalog.show(ADMIN, "vault")
    assert final.enabled == [] and not final.credential_set and final.config == {"label": "east"}


def test_the_credential_is_stored_sealed_and_shown_only_as_set(
    catalog: CatalogService, storage: SqliteStorage, box: SecretBox
) -> None:
    catalog.set_credential(ADMIN, "vault", SECRET)
    row = storage.catalog.get("vault")
    assert row is not None and row.credential_enc is not None
    assert SECRET.encode() not in row.credential_enc
    assert box.open(row.credential_enc, "catalog instance 'vault' (vault)") == SECRET
    detail = catalog.show(ADMIN, "vault")
    assert detail.credential_set and SECRET not in detail.model_dump_json()
    assert set(detail.config_schema["properties"]) == {"label"}
    assert set(detail.params) == {"vault_status"}


def test_a_config_that_does_not_validate_is_refused_and_nothing_is_stored(
    catalog: CatalogService,
) -> None:
    with pytest.raises(
        ConfigError, match="labl: Extra inputs are not permitted; did you mean 'label'\\?$"
    ):
        catalog.configure(ADMIN, "vault", {"labl": "typo"})
    with pytest.raises(ConfigError, match="vector.qdrant does not validate: url: must be an http"):
        catalog.configure(ADMIN, "vector.qdrant", {"url": "qdrant:6333"})
    assert catalog.storage.catalog.list() == [] and catalog.audit(ADMIN) == []


def test_bad_requests_get_errors_that_say_what_to_do(catalog: CatalogService) -> None:
    with pytest.raises(UnknownToolError, match="'jira'; types: .*vault"):
        catalog.enable(ADMIN, "jira")
    with pytest.raises(UnknownToolError, match="no tool type 'jira' is installed"):
        catalog.enable(ADMIN, "east-vault", type_name="jira")
    with pytest.raises(ConfigError, match="surfaces are agents, api, cli; unknown: chat"):
        catalog.enable(ADMIN, "vault", ["chat"])
    with pytest.raises(ConfigError, match="planning takes no credential"):
        catalog.set_credential(ADMIN, "planning", SECRET)
    with pytest.raises(ConfigError, match="empty credential"):
        catalog.set_credential(ADMIN, "vault", "  ")
    with pytest.raises(ConfigError, match="invalid instance name 'East Vault'"):
        catalog.enable(ADMIN, "East Vault", type_name="vault")
    with pytest.raises(CatalogError, match="planning has no outside exit"):
        catalog.probe(ADMIN, "planning")
    assert catalog.audit(ADMIN) == []


def test_a_named_instance_has_the_type_of_its_first_change(catalog: CatalogService) -> None:
    view = catalog.enable(ADMIN, "east-vault", type_name="vault")
    assert (view.name, view.type_name) == ("east-vault", "vault")
    catalog.configure(ADMIN, "east-vault", {"label": "east"})  # the row knows its type
    with pytest.raises(CatalogError, match="is of type 'vault', not 'planning'"):
        catalog.enable(ADMIN, "east-vault", type_name="planning")
    names = [v.name for v in catalog.list(ADMIN).tools]
    assert "east-vault" in names and "vault" in names


def test_resolve_builds_the_card_with_its_credential_only_when_enabled(
    catalog: CatalogService,
) -> None:
    with pytest.raises(NotEnabledError, match="akgentic catalog enable vault --surface agents"):
        catalog.resolve_card("vault")  # no row: every flag off
    catalog.configure(ADMIN, "vault", {"label": "east"})
    catalog.enable(ADMIN, "vault", ["api"])
    with pytest.raises(NotEnabledError, match="not enabled for agents"):
        catalog.resolve_card("vault")
    catalog.enable(ADMIN, "vault")
    with pytest.raises(CredentialError, match="needs its api_key: akgentic catalog set-credential"):
        catalog.resolve_card("vault")
    catalog.set_credential(ADMIN, "vault", SECRET)

    card = catalog.resolve_card("vault")
    assert isinstance(card, VaultTool) and card.label == "east"
    [tool] = card.get_tools()
    assert tool() == f"the vault east opened with key {key_digest(SECRET)}"
    assert SECRET not in card.model_dump_json()

    catalog.configure(ADMIN, "vector.qdrant", {"url": "http://127.0.0.1:6333"})
    catalog.enable(ADMIN, "vector.qdrant")
    assert isinstance(catalog.resolve("vector.qdrant"), QdrantServer)
    with pytest.raises(CatalogError, match="is a service"):
        catalog.resolve_card("vector.qdrant")
    with pytest.raises(UnknownToolError):
        catalog.resolve_card("nothing")


def test_a_wrong_or_missing_key_is_an_error_never_garbage(
    catalog: CatalogService, storage: SqliteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog.enable(ADMIN, "vault")
    catalog.set_credential(ADMIN, "vault", SECRET)
    other = CatalogService(storage, registry=catalog.registry, secrets=SecretBox(os.urandom(32)))
    with pytest.raises(
        CredentialError, match="encrypted under another AKGENTIC_SECRET_KEY"
    ) as caught:
        other.resolve_card("vault")
    assert SECRET not in str(caught.value)

    monkeypatch.delenv("AKGENTIC_SECRET_KEY", raising=False)
    keyless = CatalogService(storage, registry=catalog.registry)
    assert [v.name for v in keyless.list(ADMIN).tools if v.credential_set] == ["vault"]
    keyless.enable(ADMIN, "planning")  # no credential involved: no key needed
    with pytest.raises(SecretKeyError, match="AKGENTIC_SECRET_KEY, which is not set"):
        keyless.resolve_card("vault")
    with pytest.raises(SecretKeyError):
        keyless.set_credential(ADMIN, "vault", "another")
    assert storage.catalog.get("vault").credential_enc is not None  # type: ignore[union-attr]


def test_a_damaged_row_is_a_problem_named_and_removable_and_hides_no_other(
    catalog: CatalogService, storage: SqliteStorage
) -> None:
    catalog.set_credential(ADMIN, "vault", SECRET)
    catalog.enable(ADMIN, "vault")
    catalog.enable(ADMIN, "planning")
    catalog.enable(ADMIN, "gone", type_name="planning")
    with sqlite3.connect(storage.path) as db:  # hand-edited: a pasted secret, odd values
        db.execute(
            "UPDATE akgentic_catalog SET status = 'bogus', credential_enc = 'pasted-secret-1' "
            "WHERE name = 'planning'"
        )
        db.execute(
            "UPDATE akgentic_catalog SET enabled_cli = 7, type_name = 'jira' WHERE name = 'gone'"
        )

    listing = catalog.list(ADMIN)
    vault = next(v for v in listing.tools if v.name == "vault")
    assert vault.enabled == ["agents"] and vault.credential_set
    assert "gone" not in [v.name for v in listing.tools + listing.orphaned]
    gone, planning = listing.problems  # by name
    assert planning.startswith("catalog instance 'planning': the stored credential is str")
    assert "the stored status 'bogus' is not one of" in planning
    assert "akgentic catalog remove planning --force" in planning
    assert "the stored cli flag 7 is not 0 or 1" in gone
    assert "akgentic catalog remove gone)" in gone  # its type is not installed: no --force
    assert "pasted-secret-1" not in " ".join(listing.problems)

    for refused in (
        lambda: catalog.show(ADMIN, "planning"),
        lambda: catalog.enable(ADMIN, "planning"),
        lambda: catalog.configure(ADMIN, "planning", {}),
        lambda: catalog.resolve_card("planning"),
    ):
        with pytest.raises(CatalogError, match="the row cannot be read, so it is ignored"):
            refused()
    assert catalog.resolve_card("vault") is not None

    with pytest.raises(CatalogError, match="is not orphaned"):
        catalog.remove(ADMIN, "planning")
    assert catalog.remove(ADMIN, "planning", force=True)
    assert catalog.remove(ADMIN, "gone")
    assert catalog.list(ADMIN).problems == []


def test_settings_merged_by_two_processes_at_once_are_both_kept(
    catalog: CatalogService, storage: SqliteStorage
) -> None:
    other_store = SqliteStorage(storage.path)  # another process: its own connections
    other = CatalogService(other_store, registry=catalog.registry)
    catalog.configure(ADMIN, "vector.weaviate", {"url": "http://w:8080"}, merge=True)
    write = storage.catalog.set_config
    others = [lambda: other.configure(BOB, "vector.weaviate", {"grpc_port": 50051}, merge=True)]

    def late(*args: Any, **kwargs: Any) -> Any:
        if others:  # the other's merge commits between this one's read and its write
            others.pop()()
        return write(*args, **kwargs)

    storage.catalog.set_config = late  # type: ignore[method-assign]
    view = catalog.configure(ADMIN, "vector.weaviate", {"url": "http://w2:8080"}, merge=True)

    assert view.config == {"url": "http://w2:8080", "grpc_port": 50051}
    assert [line.detail["config"] for line in catalog.audit(ADMIN)[-2:]] == [
        {"url": "http://w:8080", "grpc_port": 50051},
        {"url": "http://w2:8080", "grpc_port": 50051},
    ]

    def always(*args: Any, **kwargs: Any) -> Any:  # someone changes it every time
        other.configure(BOB, "vector.weaviate", {"grpc_port": 50052 + len(calls)}, merge=True)
        calls.append(1)
        return write(*args, **kwargs)

    calls: list[int] = []
    storage.catalog.set_config = always  # type: ignore[method-assign]
    with pytest.raises(CatalogError, match=r"kept changing .*\(5 tries\): run it again"):
        catalog.configure(ADMIN, "vector.weaviate", {"url": "http://w3:8080"}, merge=True)
    assert catalog.show(ADMIN, "vector.weaviate").config["url"] == "http://w2:8080"
    other_store.close()
