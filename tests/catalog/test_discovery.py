"""Discovery: the package's own types, the ``akgentic.tools`` entry points of installed
distributions, the in-tree custom package; problems are reported, never fatal; a type
whose package is removed leaves the list and its row is orphaned."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from akgentic.catalog import (
    CatalogService,
    OrphanedInstanceError,
    ToolManifest,
    discover,
    register_tool,
)
from akgentic.storage import SqliteStorage
from akgentic.tool.core import ToolCard
from tests.catalog.conftest import ADMIN
from tests.catalog.distributions import make_distribution

SHIPPED = {
    "embeddings.openai",
    "embeddings.openai_compatible",
    "knowledge_graph",
    "metadata",
    "model",
    "notification",
    "planning",
    "skill",
    "vector.qdrant",
    "vector.weaviate",
}


def test_the_package_s_own_types_are_found_with_their_manifests() -> None:
    registry = discover(entry_point_group=None)
    assert {t.name for t in registry.types()} >= SHIPPED
    assert registry.problems == []
    planning = registry.require("planning")
    assert planning.is_card and not planning.has_probe and planning.manifest.access == "write"
    assert set(planning.params()) == {"get_planning_task", "update_planning", "search_planning"}
    assert planning.params()["search_planning"]["properties"]["query"]["type"] == "string"
    qdrant = registry.require("vector.qdrant")
    assert not qdrant.is_card and qdrant.has_probe and qdrant.manifest.credential == "api_key"
    assert set(qdrant.config_schema()["properties"]) == {"url"}


def test_an_entry_point_of_an_installed_distribution_is_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = make_distribution(tmp_path / "site", type_name="jira")
    monkeypatch.syspath_prepend(str(dist.root))
    try:
        registry = discover()
        jira = registry.require("jira")
        assert jira.cls.__module__ == dist.package and jira.is_card
        assert jira.source == f"entry point jira = {dist.package}:JiraTool ({dist.package} 1.0)"
        assert set(jira.params()) == {"jira_issue"}
        assert registry.problems == []
    finally:
        dist.forget()


def test_an_entry_point_naming_a_module_counts_every_type_it_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = make_distribution(tmp_path / "site", type_name="jira", entry_point="{package}")
    monkeypatch.syspath_prepend(str(dist.root))
    try:
        registry = discover()
        assert registry.require("jira").source.startswith(f"entry point jira = {dist.package} (")
    finally:
        dist.forget()


def test_a_removed_package_s_type_leaves_the_list_and_its_row_is_orphaned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage: SqliteStorage
) -> None:
    dist = make_distribution(tmp_path / "site", type_name="jira")
    monkeypatch.syspath_prepend(str(dist.root))
    try:
        installed = CatalogService(storage, registry=discover())
        installed.configure(ADMIN, "jira", {"site": "https://jira.acme"})
        installed.enable(ADMIN, "jira")
        assert [v.name for v in installed.list(ADMIN).tools if v.name == "jira"] == ["jira"]
    finally:
        dist.forget()
    monkeypatch.undo()  # the distribution is uninstalled: its folder leaves sys.path

    after = CatalogService(storage, registry=discover())
    listing = after.list(ADMIN)
    assert "jira" not in {v.name for v in listing.tools}
    [orphan] = listing.orphaned
    assert (orphan.name, orphan.type_name, orphan.kind) == ("jira", "jira", "orphaned")
    assert orphan.enabled == ["agents"] and orphan.config == {"site": "https://jira.acme"}
    for attempt in (
        lambda: after.enable(ADMIN, "jira", ["api"]),
        lambda: after.configure(ADMIN, "jira", {}),
        lambda: after.resolve("jira"),
    ):
        with pytest.raises(OrphanedInstanceError, match="its type 'jira' is not installed"):
            attempt()
    assert after.remove(ADMIN, "jira") is True
    assert after.list(ADMIN).orphaned == []


def test_a_broken_entry_point_is_a_problem_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = make_distribution(
        tmp_path / "a", type_name="broken", module_source="raise RuntimeError('half installed')"
    )
    missing = make_distribution(tmp_path / "b", type_name="nothing", entry_point="no_such_module:X")
    good = make_distribution(tmp_path / "c", type_name="jira")
    for dist in (broken, missing, good):
        monkeypatch.syspath_prepend(str(dist.root))
    try:
        registry = discover()
        assert "jira" in registry and "broken" not in registry and "nothing" not in registry
        assert {t.name for t in registry.types()} >= SHIPPED
        problems = "\n".join(registry.problems)
        assert f"entry point broken = {broken.package}:JiraTool" in problems
        assert "RuntimeError: half installed" in problems
        assert "ModuleNotFoundError" in problems and "no_such_module" in problems
    finally:
        for dist in (broken, missing, good):
            dist.forget()


def test_a_name_taken_twice_keeps_the_first_and_reports_the_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = make_distribution(tmp_path / "site", type_name="planning")
    monkeypatch.syspath_prepend(str(shadow.root))
    try:
        registry = discover()
        assert registry.require("planning").cls.__name__ == "PlanningTool"
        assert any(
            "type name 'planning'" in p and "is already taken by" in p for p in registry.problems
        )
    finally:
        shadow.forget()


def _custom_package(root: Path, modules: dict[str, str]) -> str:
    name = f"custom_tools_{uuid.uuid4().hex[:8]}"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    for module, source in modules.items():
        (root / name / f"{module}.py").write_text(textwrap.dedent(source))
    return name


def test_the_custom_package_s_modules_are_imported_and_their_types_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticket = """
        from typing import ClassVar
        from akgentic.catalog import ToolManifest, register_tool
        from akgentic.tool.core import ToolCard

        @register_tool
        class TicketTool(ToolCard):
            manifest: ClassVar[ToolManifest] = ToolManifest(name="ticket", description="Tickets.")

        class NotDeclared(ToolCard):
            pass
    """
    package = _custom_package(tmp_path, {"ticket": ticket, "broken": "import no_such_thing\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = discover(entry_point_group=None, custom_packages=[package])
    assert registry.require("ticket").source == f"custom {package}.ticket"
    assert [p for p in registry.problems if f"{package}.broken" in p]
    assert discover(entry_point_group=None).problems == []  # the in-tree package: empty, fine


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (lambda: type("NoManifest", (ToolCard,), {}), "has no manifest"),
        (
            lambda: type(
                "NeedsKey",
                (ToolCard,),
                {
                    "__annotations__": {"manifest": ClassVar[ToolManifest]},
                    "manifest": ToolManifest(name="k", description="k", credential="api_key"),
                },
            ),
            "defines no bind_credential",
        ),
        (lambda: type("Plain", (), {}), "is a pydantic model class"),
    ],
)
def test_the_decorator_checks_the_contract(declare: Callable[[], Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        register_tool(declare())


def test_the_decorator_can_set_the_manifest_and_marks_only_the_class() -> None:
    @register_tool(manifest=ToolManifest(name="memo", description="Memos."))
    class Memo(BaseModel):
        text: str = ""

    class MemoChild(Memo):
        pass

    registry = discover(builtin=False, entry_point_group=None, custom_packages=(), extra=[Memo])
    assert registry.require("memo").source.startswith("added ")
    assert "memo" in registry and len(registry) == 1
    from akgentic.catalog.manifest import is_registered_tool

    assert is_registered_tool(Memo) and not is_registered_tool(MemoChild)
