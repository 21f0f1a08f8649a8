"""The docs a newcomer reads: the team-card reference is generated and current, links
lead to files that exist, no internal jargon, the pictures are there, every package has
its README, and the architecture page names only packages that exist.

The code a reader copies works as written: each page's Python blocks are run as one
program, its YAML parsed, its team cards and ``mcp.json`` files loaded, its entry
points' group checked and its ``akgentic run ... -m`` lines run, offline, from the
repository's root (or the example's folder); each Python block parses and imports only
public names; each ``akgentic`` command shown exists with the options shown; each dotted
``akgentic.`` name exists. A block that is shown but not run — a sketch with elided
bodies, a step of the reader's own program, code that needs a server — is marked by an
HTML comment on the line before it, ``<!-- fragment: why -->``."""

from __future__ import annotations

import ast
import importlib
import re
import shlex
import shutil
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from akgentic.agent import AgentConfig
from akgentic.core import AgentCard
from akgentic.team import MemberSpec, Suggestion, TeamCard, reference

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "team-cards.md"
PACKAGES = REPO / "src" / "akgentic"
DOCS = sorted(
    [
        REPO / "README.md",
        *(REPO / "docs").glob("*.md"),
        *PACKAGES.rglob("README.md"),
        *(REPO / "examples").rglob("README.md"),
    ]
)


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


# -- the code a reader copies -----------------------------------------------------------------

FRAGMENT = "<!-- fragment:"
"""The line before a code block that is shown, not run (``<!-- fragment: why -->``): a
sketch with elided bodies, or a step of the reader's own program. It is still parsed,
and what it imports still checked."""
FOLDERS = {"docs/custom-cards.md": REPO / "examples" / "cards"}
"""The folder a reader runs a page's code from, when not the repository's root: copied,
with the example module its card imports."""


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int
    """The page's line of the block's first line of code."""
    fragment: bool

    @property
    def file(self) -> str | None:
        """The name a first-line comment gives the block (``# team.yaml``): a file the
        page has the reader save, beside the code that uses it."""
        named = re.fullmatch(r"# ([\w-]+\.(?:py|yaml))", self.code.split("\n", 1)[0])
        return named[1] if named else None


def code_blocks(page: Path, language: str | None = None) -> list[Block]:
    text = page.read_text()
    blocks = []
    for found in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M):
        before = text[: found.start()].rstrip("\n").rsplit("\n", 1)[-1]
        code = textwrap.dedent(found[3])
        line = text.count("\n", 0, found.start()) + 2
        blocks.append(Block(found[2], code, line, before.lstrip().startswith(FRAGMENT)))
    return [b for b in blocks if language is None or b.language == language]


def page_program(page: Path) -> str:
    """The page's Python blocks that are neither fragments nor files, as one module — a
    later block uses an earlier one's names, as in the file a reader pastes them into —
    each at its own line, so a traceback names the page's line."""
    source = ""
    for block in code_blocks(page, "python"):
        if not block.fragment and block.file is None:
            source += "\n" * (block.line - 1 - source.count("\n")) + block.code
    return source


@dataclass
class PageRun:
    folder: Path
    namespace: dict[str, Any]
    out: str
    cards: list[TeamCard]
    answers: dict[str, str]
    """Each ``akgentic run ... -m`` line of the page's shell blocks: its last line (the
    one its comment shows, when it shows one: ``# ... answer: TEXT``)."""


def run_page(
    page: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> PageRun:
    """Do what the page says, offline, in a folder of its own: save its files, run its
    program, load its team cards and ``mcp.json`` files, check its entry points' group,
    run its ``akgentic run ... -m`` lines. What the page
    registers (models, modules imported from its folder) is forgotten afterwards."""
    from akgentic.cli import app
    from akgentic.llm import registry
    from akgentic.tool.core.installed import ENTRY_POINT_GROUP
    from akgentic.tool.mcp import MCPTool

    folder = tmp_path / "reader"
    if page in FOLDERS:
        shutil.copytree(FOLDERS[page], folder)
    else:  # the repository's root, as far as the code reads it: its examples
        folder.mkdir()
        (folder / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(registry, "_models", dict(registry._models))
    modules = set(sys.modules)
    try:
        blocks = code_blocks(REPO / page)
        for block in blocks:
            if block.file is not None and not block.fragment:
                (folder / block.file).write_text(block.code)
        namespace: dict[str, Any] = {"__name__": "docs_page"}
        exec(compile(page_program(REPO / page), str(REPO / page), "exec"), namespace)
        out = capsys.readouterr().out
        cards = []
        for block in blocks:
            if block.fragment:
                continue
            if block.language == "yaml":
                yaml.safe_load(block.code)  # a roster, a scenario, a list of tools: YAML
            elif block.language == "json" and "mcpServers" in block.code:
                (folder / "mcp.json").write_text(block.code)
                assert MCPTool.from_config(folder / "mcp.json")  # read, nothing started
            elif block.language == "toml":
                groups = tomllib.loads(block.code)["project"]["entry-points"]
                assert list(groups) == [ENTRY_POINT_GROUP], f"{page}:{block.line}"
            if block.language == "yaml" and not block.fragment and "members:" in block.code:
                path = folder / (block.file or f"page-{block.line}.yaml")
                path.write_text(block.code)
                cards.append(TeamCard.from_yaml(path))
        answers = {}
        env = {"AKGENTIC_STORAGE": f"sqlite:///{tmp_path / 'cli.db'}", "AKGENTIC_MODEL": None}
        for block in blocks:
            for line in block.code.splitlines() if block.language == "bash" else []:
                words = shlex.split(line, comments=True)
                if words[:2] == ["akgentic", "run"] and ("-m" in words or "--message" in words):
                    result = CliRunner().invoke(app, words[1:], env=env)
                    assert result.exit_code == 0, f"{page}: {line}\n{result.output}"
                    answers[line] = result.output.rstrip().rsplit("\n", 1)[-1]
                    said = line.partition("# ")[2].partition("answer: ")[2]
                    assert not said or answers[line] == f"answer: {said}", (line, answers[line])
        return PageRun(folder, namespace, out, cards, answers)
    finally:
        for name in set(sys.modules) - modules:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if module_file.startswith(str(folder)):
                del sys.modules[name]


def test_the_readme_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_page("README.md", tmp_path, monkeypatch, capsys)
    lines = ran.out.splitlines()
    assert lines[0] == "1 StartMessage"  # a team in Python: the stored stream, from seq 1
    assert (ran.folder / "team.db").is_file()  # "./team.db"
    assert "HELLO" in lines  # a plain actor team, as its comment says
    assert lines[-1].startswith("[<") and "@Shout" in lines[-1]  # the roster


def test_the_core_pages_actor_example_prints_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    count, states = run_page("docs/core.md", tmp_path, monkeypatch, capsys).out.splitlines()
    assert count == "1"  # as the page's comments say
    assert states.endswith(": CounterState(count=1)}")


def test_the_custom_card_guide_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_page("docs/custom-cards.md", tmp_path, monkeypatch, capsys)
    # sections 1 and 2 pasted into one module build the example's card, with its fields
    monkeypatch.syspath_prepend(str(FOLDERS["docs/custom-cards.md"]))
    example = importlib.import_module("tally")
    card = ran.namespace["TallyTool"]
    assert card.model_fields.keys() == example.TallyTool.model_fields.keys()
    assert {"_ask", "observer"} <= set(vars(card))
    assert ran.namespace["config"].tools == [card(max_amount=10)]  # section 3, from Python
    (team,) = ran.cards  # section 3, from YAML
    (tool,) = team.members[0].card.config.tools
    assert type(tool).__name__ == "TallyTool" and tool.max_amount == 10
    assert list(ran.answers.values()) == ["answer: [scripted] Counted: apples is now 1."]


def test_the_testing_guide_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from akgentic.llm import registered_models

    ran = run_page("docs/testing.md", tmp_path, monkeypatch, capsys)
    assert ran.out == "Three points, scripted.\n"  # as the print's comment says
    assert "fake-llm" not in registered_models()  # the with block ended it
    (team,) = ran.cards
    assert team.imports == ["fake_models"] and (ran.folder / "fake_models.py").is_file()
    assert list(ran.answers.values()) == ["answer: Analyst here, answering offline."]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_import_a_page_shows_is_public(doc: Path) -> None:
    # fragments included: a renamed or private name breaks here, not in a reader's hands
    for block in code_blocks(doc, "python"):
        where = f"{doc.relative_to(REPO)}:{block.line}"
        try:
            tree = ast.parse(block.code)
        except SyntaxError as exc:
            raise AssertionError(f"{where}: a python block that is not Python: {exc}") from None
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("akgentic"):
                        importlib.import_module(alias.name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("akgentic"):
                module = importlib.import_module(node.module)  # type: ignore[arg-type]
                public = getattr(module, "__all__", None)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{where}: {node.module}.{alias.name}"
                    assert public is None or alias.name in public, (
                        f"{where}: {alias.name} is not in {node.module}.__all__"
                    )


def shown_commands(doc: Path) -> list[str]:
    """The ``akgentic ...`` command lines a page shows: in its shell blocks (a console
    block's ``$`` lines) and in its inline code."""
    text = doc.read_text()
    lines = []
    for block in code_blocks(doc):
        if block.language in ("bash", "console"):
            for line in block.code.replace("\\\n", " ").splitlines():
                if block.language == "console" and not line.startswith("$ "):
                    continue
                lines.append(line.removeprefix("$ "))
    prose = re.sub(r"^( *)```.*?^\1```", "", text, flags=re.S | re.M)
    lines += re.findall(r"`((?:\S*/)?akgentic [^`]+)`", prose)
    shown = []
    for line in lines:
        found = re.search(r"(?:^|[\s/])(akgentic\b.*)", line)
        if found and not line.lstrip().startswith(("#", "pip ")):
            shown.append(found[1])
    return shown


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_command_a_page_shows_exists_with_its_options(doc: Path) -> None:
    import typer

    from akgentic.cli import app

    root = typer.main.get_command(app)
    for shown in shown_commands(doc):
        words = shlex.split(shown, comments=True) if shown.count('"') % 2 == 0 else shown.split()
        command, at = root, 1
        while hasattr(command, "get_command") and at < len(words):  # a group (typer's click)
            word = words[at]
            if word.startswith("-") or word == "...":
                break
            # `catalog list|show|...` names several; a placeholder (TEAM, ...) none
            names = word.split("|") if "|" in word else [word]
            context = command.context_class(command)
            found = [command.get_command(context, name) for name in names]
            assert all(found), f"{doc.relative_to(REPO)}: `{shown}`: no command {word!r}"
            command, at = found[0], at + 1
        options = {"--help", "-h"}
        for param in command.params:
            options.update(param.opts, param.secondary_opts)
        for word in words[at:]:
            if word in ("|", "&&", ";") or word.startswith(">"):
                break
            word = word.strip("[]")  # an optional one: [--all]
            if re.fullmatch(r"--?[a-z][\w-]*(=.*)?", word):
                option = word.partition("=")[0]
                assert option in options, f"{doc.relative_to(REPO)}: `{shown}`: no {option}"


RUN_ALONE = [
    doc
    for doc in DOCS
    if doc != PAGE
    and str(doc.relative_to(REPO))
    not in ("README.md", "docs/core.md", "docs/custom-cards.md", "docs/testing.md")
    and any(
        not b.fragment and b.language in ("python", "yaml", "json", "toml")
        for b in code_blocks(doc)
    )
]
"""The pages whose code has no test of its own above (the team-card reference is
generated from examples its own tests validate)."""


@pytest.mark.parametrize("doc", RUN_ALONE, ids=lambda p: str(p.relative_to(REPO)))
def test_a_pages_code_runs_as_written(
    doc: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_page(str(doc.relative_to(REPO)), tmp_path, monkeypatch, capsys)


NOT_CODE = {"akgentic.db", "akgentic.tools", "akgentic.invalid"}
"""Dotted names the pages use that are no module: the store's file, the entry-point
group, a host name."""


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_dotted_name_a_page_gives_exists(doc: Path) -> None:
    # `akgentic.team.replay.register_reducer`: a module, then attributes down to the name
    missing = object()
    for name in sorted(set(re.findall(r"\bakgentic(?:\.[A-Za-z_]\w*)+", doc.read_text()))):
        if name in NOT_CODE:
            continue
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                found: Any = importlib.import_module(".".join(parts[:cut]))
                break
            except ModuleNotFoundError:
                continue
        for part in parts[cut:]:
            try:
                found = getattr(found, part, missing)
            except ImportError as exc:  # a removed name, answered with what replaces it
                assert "removed" in str(exc), f"{doc.relative_to(REPO)}: {name}: {exc}"
                break
            assert found is not missing, f"{doc.relative_to(REPO)}: {name} does not exist"
