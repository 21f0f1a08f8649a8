"""The docs a newcomer reads: the team-card reference is generated and current, links
lead to files that exist, no internal jargon, the pictures are there, every package has
its README, and the architecture page names only packages that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from akgentic.agent import AgentConfig
from akgentic.core import AgentCard
from akgentic.team import MemberSpec, Suggestion, TeamCard, reference

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "team-cards.md"
PACKAGES = REPO / "src" / "akgentic"
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"), *PACKAGES.rglob("README.md")])


def test_the_team_card_reference_is_current() -> None:
    assert reference.check(PAGE), "docs/team-cards.md is stale: run python3 dev.py docs"


def test_the_reference_has_every_field_with_its_default() -> None:
    page = PAGE.read_text()
    models = [TeamCard, Suggestion, MemberSpec, AgentCard, AgentConfig, *reference.shipped_cards()]
    for model in models:
        section = page.split(f"\n### {model.__name__}\n", 1)[1].split("\n### ", 1)[0]
        assert "```yaml" in section, f"{model.__name__} has no example"
        for name, info in model.model_fields.items():
            row = next((r for r in section.splitlines() if r.startswith(f"| `{name}` |")), None)
            assert row is not None, f"{model.__name__}.{name} is missing"
            expected = "required" if info.is_required() else "`"
            assert expected in re.split(r"(?<!\\)\|", row)[3], row


def test_an_example_that_no_longer_validates_stops_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = {**reference.EXAMPLES, Suggestion: "mesage: a typo\n"}
    monkeypatch.setattr(reference, "EXAMPLES", broken)
    with pytest.raises(ValidationError, match="mesage"):
        reference.render()


def test_check_and_write_from_the_command_line(tmp_path: Path) -> None:
    page = tmp_path / "cards.md"
    assert reference.main(["--check", str(page)]) == 1
    assert reference.main(["--write", str(page)]) == 0
    assert reference.main(["--check", str(page)]) == 0
    page.write_text(page.read_text() + "edited by hand\n")
    assert reference.main(["--check", str(page)]) == 1


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_links_lead_to_files_in_the_repository(doc: Path) -> None:
    text = doc.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://|#|mailto:", target):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{doc.relative_to(REPO)} links to {target}, which does not exist"
        assert REPO in path.parents or path == REPO, f"{target} leaves the repository"
    assert "../shared" not in text


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_internal_jargon(doc: Path) -> None:
    text = doc.read_text()
    for jargon in (r"\bseeds? ?\d{3}\b", r"DESIGN\.md", r"core/API\.md", r"\(seed\b"):
        found = re.search(jargon, text, re.IGNORECASE)
        assert found is None, f"{doc.relative_to(REPO)}: {found.group(0)!r}"  # type: ignore[union-attr]


def test_every_package_has_a_readme_beside_its_code() -> None:
    packages = [p for p in PACKAGES.iterdir() if (p / "__init__.py").is_file()]
    missing = [p.name for p in packages if not (p / "README.md").is_file()]
    assert missing == []


def mermaid_blocks(text: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", text, re.S)


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_pictures_of_the_layers_and_of_a_message_are_drawn(doc: str) -> None:
    blocks = mermaid_blocks((REPO / doc).read_text())
    layers = next((b for b in blocks if "akgentic.core" in b), "")
    packages = sorted(p.name for p in PACKAGES.iterdir() if (p / "__init__.py").is_file())
    for name in packages:
        drawn = len(re.findall(rf'\["akgentic\.{name}\b', layers))
        assert drawn == 1, f"{doc}: the layers picture draws akgentic.{name} {drawn} times"
    path = next((b for b in blocks if "sequenceDiagram" in b), "")
    for step in ("Person", "entry point", "#PlanningTool", "event log", "replay"):
        assert step in path, f"{doc}: the message's path lacks {step!r}"


def test_the_architecture_page_names_only_packages_that_exist() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    packages = {p.name for p in PACKAGES.iterdir() if (p / "__init__.py").is_file()}
    named = set(re.findall(r"\bakgentic\.([a-z_]+)\b", text))
    assert named - packages == set()
    assert packages - named == set()
    # a team placed whole on a Ray worker is built (serve --placement ray, scale-out.md);
    # one team's members on several machines is not: the page says which is which
    flat = " ".join(text.split())
    assert "`akgentic serve --placement ray`" in flat and "(scale-out.md)" in flat
    planned = flat.split("**Planned, not built yet:**", 1)[1].split(".", 1)[0]
    assert "members on different machines" in planned, planned


def test_the_all_extra_names_every_optional_feature_but_the_embedder() -> None:
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    [requirement] = extras["all"]
    named = set(re.fullmatch(r"akgentic\[([a-z_,]+)\]", requirement)[1].split(","))  # type: ignore[index]
    assert named == set(extras) - {"all", "dev", "embeddings", "ray"}
    readme = (REPO / "README.md").read_text()
    assert 'pip install -e ".[all]"' in readme
    for extra in named - {"vector", "vector_search"}:
        assert f"`{extra}`" in readme.split("## Install", 1)[1].split("\n## ", 1)[0], extra


def test_each_field_has_a_whole_meaning_of_its_own() -> None:
    """A field's meaning is its own and ends as a sentence: not its class's description
    repeated on every field, nor a list's opening (``provider``:) or one item of it (...;)."""
    table: list[tuple[str, str]] = []
    tables = [table]
    for line in reference.render().splitlines():
        if line.startswith("#"):
            table = []
            tables.append(table)
        elif line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            table.append((cells[0], cells[3]))
    for rows in tables:
        meanings = [meaning for _, meaning in rows if meaning]
        shared = {m for m in meanings if meanings.count(m) > 1}
        assert not shared, [field for field, meaning in rows if meaning in shared]
        cut = [field for field, meaning in rows if meaning.endswith((":", ";", ","))]
        assert not cut, cut


def test_the_core_page_names_only_what_it_says_is_importable() -> None:
    # "Everything here is importable from akgentic.core, but for the few names given
    # with their module": a class or constant the page names is one or the other
    import builtins
    import importlib

    import akgentic.core

    text = (REPO / "docs" / "core.md").read_text()
    elsewhere = {"BaseAgent", "TeamManager"}  # the layers above, named as such
    for found in re.finditer(r"`([A-Z][A-Za-z0-9_]*)(?:[.(][^`]*)?`", text):
        name = found[1]
        if hasattr(akgentic.core, name) or hasattr(builtins, name) or name in elsewhere:
            continue
        module = re.search(r"`(akgentic\.core\.[\w.]+)`", text[found.end() : found.end() + 60])
        assert module is not None, f"docs/core.md: {name} is not in akgentic.core: say where"
        assert hasattr(importlib.import_module(module[1]), name), f"{name} not in {module[1]}"


def test_the_core_pages_actor_example_prints_what_it_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "core.md").read_text(), re.S)
    exec(compile(example, "docs/core.md", "exec"), {"__name__": "core_page"})
    count, states = capsys.readouterr().out.splitlines()
    assert count == "1"  # as the page's comments say
    assert states.endswith(": CounterState(count=1)}")
