"""The card's read side, its error table, its channels, and its wiring."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai import BinaryContent

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, TOOL_CALL, ToolFactory
from akgentic.tool.errors import RetriableError
from akgentic.tool.toolsets import ToolsetCard
from akgentic.tool.workspace import (
    DocumentIndex,
    Filesystem,
    GateRefusalError,
    WorkspaceActor,
    WorkspaceChangeEvent,
    WorkspaceGlob,
    WorkspaceGrep,
    WorkspaceList,
    WorkspaceTool,
    WorkspaceWrite,
)
from akgentic.tool.workspace import readers as readers_module

from ..conftest import Team
from .conftest import (
    Tools,
    add_member,
    card_of,
    events_of,
    factory_of,
    member_tools,
    tool_address,
    tools_of,
)


def tree_of(team: Team) -> Path:
    return (
        Path(os.environ["AKGENTIC_WORKSPACES_ROOT"])
        / "alice"
        / "_team"
        / str(team.orchestrator.team_id)
    )


@pytest.fixture
def tools(team: Team) -> Tools:
    tools = member_tools(team, "@Dev")
    tools["workspace_write"]("src/app.py", "import os\n\ndef main():\n    return os.getcwd()\n")
    tools["workspace_write"]("src/util.py", "def helper():\n    return 42\n")
    tools["workspace_write"]("README.md", "# App\nRun main().\n")
    return tools


@pytest.mark.parametrize(
    ("depth", "bound"), [(0, "greater than or equal to 1"), (9, "less than or equal to 5")]
)
def test_a_list_depth_out_of_bounds_is_refused_saying_the_range(
    tools: Tools, depth: int, bound: str
) -> None:
    """A depth of 0 was listed as 1 and one of 9 as 5, nothing said: out of 1..5 it is
    refused with the bound, as a search's limit is."""
    with pytest.raises(RetriableError) as refused:
        tools["workspace_list"]("src", depth=depth)
    assert str(refused.value) == (
        f"workspace_list: invalid argument depth: Input should be {bound}, got {depth}. "
        f"Call it as workspace_list(path: str = '.', depth: int = 1)."
    )
    assert tools["workspace_list"]("src", depth=5).splitlines()[0] == "src/"


def test_list_glob_and_grep(tools: Tools) -> None:
    listing = tools["workspace_list"]()
    assert listing.splitlines() == ["./", "src/", "README.md (18 bytes)"]
    deep = tools["workspace_list"]("src", depth=2)
    assert deep.splitlines() == ["src/", "app.py (46 bytes)", "util.py (28 bytes)"]
    assert tools["workspace_glob"]("**/*.py").splitlines() == ["src/app.py", "src/util.py"]
    assert tools["workspace_glob"]("*.rs") == "No path matches '*.rs'."
    with pytest.raises(RetriableError, match="Path escapes workspace root"):
        tools["workspace_glob"]("../*")
    with pytest.raises(RetriableError, match="Path escapes workspace root"):
        tools["workspace_glob"]("src/../../*")
    with pytest.raises(RetriableError) as inside:  # it said 'Path escapes workspace root'
        tools["workspace_glob"]("src/../src/*.py")
    assert str(inside.value) == (
        "a glob pattern takes no '..' (got 'src/../src/*.py'): write it from the workspace "
        "root, e.g. 'src/*.py'"
    )
    grep = tools["workspace_grep"]
    assert grep("def \\w+").splitlines() == [
        "src/app.py:3: def main():",
        "src/util.py:1: def helper():",
    ]
    assert grep("MAIN", ignore_case=True, include="*.md") == "README.md:2: Run main()."
    with pytest.raises(RetriableError, match="Invalid regex pattern: "):
        grep("def (")


@pytest.mark.parametrize("pattern", [".", "./", ".//"])
def test_a_glob_of_the_root_itself_says_what_to_send_instead(tools: Tools, pattern: str) -> None:
    """pathlib's glob raises IndexError / AttributeError on a pattern with no component."""
    with pytest.raises(RetriableError, match=r"names the workspace root itself.*'\*\*/\*'"):
        tools["workspace_glob"](pattern)


def test_a_glob_of_hundreds_of_components_answers_never_a_recursion_error(
    team: Team, tools: Tools
) -> None:
    """pathlib's glob recursed once per component: 300 of them raised RecursionError. The
    pattern's names are matched in a loop, however many."""
    assert tools["workspace_glob"]("a/" * 300 + "*").startswith("No path matches 'a/a/a/")
    (tree_of(team) / "a" / "a" / "a").mkdir(parents=True)
    (tree_of(team) / "a" / "a" / "a" / "deep.txt").write_text("x")
    assert tools["workspace_glob"]("**/" * 300 + "*.txt") == "a/a/a/deep.txt"
    assert tools["workspace_glob"]("*/" * 3 + "*.txt") == "a/a/a/deep.txt"
    assert tools["workspace_glob"]("*/" * 300 + "*.txt").startswith("No path matches '*/*/")


def test_sizes_and_line_counts_say_one_in_the_singular(tools: Tools) -> None:
    tools["workspace_write"]("one.txt", "x")
    assert tools["workspace_list"]("one.txt") == "one.txt (1 byte)"
    assert "one.txt (1 byte)" in tools["workspace_list"]().splitlines()
    with pytest.raises(RetriableError, match="one.txt has 1 line; start_line 5"):
        tools["workspace_read"]("one.txt", start_line=5)


def test_symlinks_out_of_the_tree_are_listed_as_unreachable(team: Team, tools: Tools) -> None:
    os.symlink("/etc", tree_of(team) / "etc_link")
    assert "etc_link -> (outside: unreachable)" in tools["workspace_list"]()
    with pytest.raises(RetriableError, match="Path escapes workspace root"):
        tools["workspace_read"]("etc_link/passwd")


def test_a_fifo_in_the_tree_is_refused_never_read(team: Team, tools: Tools) -> None:
    """A command in the sandbox can make a FIFO: reading it blocked the agent for ever.

    The read runs on its own thread, so that without the fix the test fails (the thread
    is still blocked when the join gives up) instead of hanging the suite."""
    os.mkfifo(tree_of(team) / "pipe.png")
    said: list[str] = []

    def read(tool: str) -> None:
        try:
            tools[tool]("pipe.png")
        except RetriableError as exc:
            said.append(str(exc))

    for tool in ("workspace_read", "workspace_view"):
        reader = threading.Thread(target=read, args=(tool,), daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), f"{tool} blocked on a FIFO"
    assert (
        said
        == [
            "'pipe.png' is not a regular file (a pipe, socket or device): only regular files "
            "can be read or changed"
        ]
        * 2
    )


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk (a command can make one in a moment)."""
    with open(path, "wb") as handle:
        handle.truncate(size)


def _peak_bytes(call: Callable[[], object]) -> tuple[object, int]:
    """What ``call`` answered (or the RetriableError it raised) and the most memory Python
    held above the start while it ran."""
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        try:
            answer: object = call()
        except RetriableError as exc:
            answer = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return answer, peak - start


def test_a_file_too_large_to_read_is_refused_before_any_of_it_is_read(
    team: Team, tools: Tools
) -> None:
    """A command can leave a file of gigabytes (a runaway log, a sparse file): the read
    took all of it into memory before refusing it for its size — enough to end the team's
    process. It is refused on its size alone, saying how big and what to do instead."""
    _sparse(tree_of(team) / "run.log", 64 * 1024 * 1024)
    for tool in ("workspace_read", "workspace_view"):
        refused, peak = _peak_bytes(lambda tool=tool: tools[tool]("run.log"))  # type: ignore[misc]
        assert isinstance(refused, RetriableError), refused
        assert peak < 8 * 1024 * 1024, (tool, peak)
    said = str(_peak_bytes(lambda: tools["workspace_read"]("run.log"))[0])
    assert said == (
        "run.log is 67,108,864 bytes, more than the 20,971,520 a read takes: nothing was "
        "read. Look at a part of it with a command (head, tail, grep) if you can run commands."
    )


def test_a_file_too_large_to_read_can_be_deleted_unread_and_is_never_read_to_change_it(
    team: Team, tools: Tools
) -> None:
    """Told a runaway log is too large to read, the model deletes it: the gate read all of
    it first (and decoded it, and split it into lines) — the way to end the team's process
    was the way out. Changing such a file is refused on its size; deleting it unread reads
    nothing."""
    _sparse(tree_of(team) / "run.log", 64 * 1024 * 1024)
    too_large = (
        "run.log is 67,108,864 bytes, more than the 20,971,520 the workspace tools change: "
        "nothing was written. Delete it with workspace_delete, or change it with a command."
    )
    for change in (
        lambda: tools["workspace_edit"]("run.log", "a", "b"),
        lambda: tools["workspace_write"]("run.log", "short\n"),
    ):
        refused, peak = _peak_bytes(change)
        assert str(refused) == too_large and peak < 8 * 1024 * 1024, peak
    answer, peak = _peak_bytes(lambda: tools["workspace_delete"]("run.log"))
    assert answer == "Deleted: deleted run.log." and peak < 8 * 1024 * 1024, peak
    assert not (tree_of(team) / "run.log").exists()
    tools["workspace_write"]("seen.log", "small\n")  # what an agent wrote, it has seen
    _sparse(tree_of(team) / "seen.log", 64 * 1024 * 1024)  # then a command made it huge
    with pytest.raises(RetriableError) as refused:
        tools["workspace_delete"]("seen.log")
    assert str(refused.value) == (
        "Refused: seen.log has changed since you last read it — it is now 67,108,864 bytes, "
        "more than the 20,971,520 the workspace tools read. Nothing was written. Look at it "
        "with a command (head, tail, ls -l) to decide what to do with it."
    )


def test_grep_says_how_much_of_a_long_matching_line_it_cut(tools: Tools) -> None:
    """A line of minified code or data: grep cut it silently, as if the line ended there."""
    tools["workspace_write"]("min.js", "var a=1;" + "x" * 4992 + "\n")
    assert tools["workspace_grep"]("var a", include="*.js") == (
        "min.js:1: var a=1;" + "x" * 1992 + " … [3000 more characters]"
    )


def test_grep_leaves_a_file_too_large_to_read_out_and_says_so(team: Team, tools: Tools) -> None:
    _sparse(tree_of(team) / "run.log", 64 * 1024 * 1024)
    answer, peak = _peak_bytes(lambda: tools["workspace_grep"]("def "))
    assert peak < 8 * 1024 * 1024, peak
    assert answer == (
        "src/app.py:3: def main():\nsrc/util.py:1: def helper():\n"
        "[not searched: run.log, over the 20,971,520 bytes a read takes]"
    )
    answer, _ = _peak_bytes(lambda: tools["workspace_grep"]("nothing here"))
    assert answer == (
        "No line matches 'nothing here'.\n"
        "[not searched: run.log, over the 20,971,520 bytes a read takes]"
    )


def test_a_symlink_loop_is_listed_as_unreachable(team: Team, tools: Tools) -> None:
    os.symlink("loop2", tree_of(team) / "loop1")
    os.symlink("loop1", tree_of(team) / "loop2")
    listing = tools["workspace_list"]().splitlines()
    assert "loop1 -> (a symlink loop: unreachable)" in listing
    assert "loop2 -> (a symlink loop: unreachable)" in listing


def test_a_glob_ending_in_a_slash_or_stars_answers_folders_only(team: Team, tools: Tools) -> None:
    """A trailing '/' was dropped: '*/' answered the root's files too (pathlib's: folders)."""
    os.symlink("README.md", tree_of(team) / "file-link")
    os.symlink("src", tree_of(team) / "dir-link")
    assert tools["workspace_glob"]("*/").splitlines() == ["src/"]
    assert tools["workspace_glob"]("**").splitlines() == ["src/"]
    assert tools["workspace_glob"]("README.md/") == "No path matches 'README.md/'."
    assert "README.md" in tools["workspace_glob"]("*").splitlines()


def test_a_glob_lists_a_path_once_even_with_a_symlink_to_it(team: Team, tools: Tools) -> None:
    os.symlink("README.md", tree_of(team) / "LINK.md")
    assert tools["workspace_glob"]("*.md").splitlines() == ["README.md"]


def test_a_search_past_the_file_cap_says_how_many_files_it_left_out_and_how_to_narrow(
    tools: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap cut the files a search looks at silently: a passage in a file past it was
    simply never found, and the answer read as if the tree had none."""
    monkeypatch.setattr(DocumentIndex, "max_files", 1)  # README.md; src/app.py, src/util.py out
    assert tools["workspace_search"]("helper") == (
        "No passage matches 'helper'.\n[searched the first 1 file of the tree only: 2 files "
        "left out; narrow it with workspace_search(query, path='a/folder') or "
        "workspace_grep(pattern, path='a/folder') or workspace_glob('a/folder/**/*.md')]"
    )
    assert tools["workspace_search"]("helper", path="src") == (  # app.py in, util.py out
        "No passage matches 'helper' in src/.\n[searched the first 1 file of src/ only: 1 "
        "file left out; narrow it with workspace_search(query, path='a/folder') or "
        "workspace_grep(pattern, path='a/folder') or workspace_glob('a/folder/**/*.md')]"
    )
    assert tools["workspace_search"]("main").startswith("README.md:1-2 (")
    monkeypatch.setattr(DocumentIndex, "max_files", 3)
    assert "left out" not in tools["workspace_search"]("helper")
    assert tools["workspace_search"]("helper", path="src").startswith("src/util.py:1-2 (")


def test_a_glob_stops_walking_past_its_cap_and_says_the_answer_was_cut(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole match list was built (and sorted) before the cap applied: a '**/*' over a
    large tree listed all of it to answer 500 paths, and a glob of exactly the cap's count
    said it was cut."""
    tools = member_tools(team, "@Dev", WorkspaceTool(workspace_glob=WorkspaceGlob(max_results=2)))
    for n in range(6):
        tools["workspace_write"](f"a{n}.txt", "x\n")
    pulled: list[str] = []
    original = Filesystem.scan

    def counting_scan(
        fs: Filesystem, start: Path | None = None, enter: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, os.DirEntry[str]]]:
        for rel, entry in original(fs, start, enter):
            pulled.append(rel)
            yield rel, entry

    monkeypatch.setattr(Filesystem, "scan", counting_scan)
    lines = tools["workspace_glob"]("*.txt").splitlines()
    assert len(pulled) == 3  # the cap, and one more to know there were more
    assert len(lines) == 3 and all(line.startswith("a") for line in lines[:2])
    assert lines[2].startswith("[… cut at the first 2 paths found, in no order: more match;")
    assert tools["workspace_glob"]("a[01].txt") == "a0.txt\na1.txt"  # exactly the cap: whole


def test_a_catastrophic_regex_is_stopped_at_the_grep_budget_and_the_next_grep_answers(
    team: Team,
) -> None:
    """re has no timeout: (a+)+$ against 40 a's and a b backtracks 2**40 times, holding the
    agent's thread for hours. Its matching runs in a worker process, killed at the budget."""
    card = WorkspaceTool(workspace_grep=WorkspaceGrep(timeout_seconds=1))
    tools = member_tools(team, "@Dev", card)
    tools["workspace_write"]("trap.txt", "a" * 40 + "b\nfine\n")
    with pytest.raises(RetriableError) as slow:
        tools["workspace_grep"]("(a+)+$")
    assert str(slow.value) == (
        "The pattern '(a+)+$' took longer than 1s to match and was stopped: simplify it (no "
        "nested quantifiers such as (a+)+ or (a|a)*, fewer .* in a row) or narrow the files "
        "with path or include"
    )
    assert tools["workspace_grep"]("^fi") == "trap.txt:2: fine"  # a new worker


def test_a_read_cut_one_line_short_says_1_more_line(tools: Tools) -> None:
    tools["workspace_write"]("two.txt", "a\nb\n")
    assert tools["workspace_read"]("two.txt", end_line=1).splitlines()[-1] == (
        "[… 1 more line: read on with start_line=2]"
    )


@pytest.mark.parametrize(
    ("start", "end", "said"),
    [
        (5, 2, "end_line 2 is before start_line 5: pass an end_line of 5 or more"),
        (1, 0, "end_line 0 is before start_line 1"),
        (-5, -2, "start_line counts from 1 (the file's first line), not -5"),
        (0, None, "start_line counts from 1 (the file's first line), not 0"),
    ],
)
def test_a_line_range_that_cannot_be_read_is_refused_saying_what_to_pass(
    tools: Tools, start: int, end: int | None, said: str
) -> None:
    tools["workspace_write"]("ten.txt", "".join(f"{n}\n" for n in range(1, 11)))
    with pytest.raises(RetriableError, match=re.escape(said)):
        tools["workspace_read"]("ten.txt", start, end)
    assert tools["workspace_read"]("ten.txt", 5, 5).splitlines() == [
        "ten.txt (lines 5-5 of 10)",
        "     5\t5",
        "[… 5 more lines: read on with start_line=6]",
    ]


def test_a_write_to_a_path_ending_in_a_slash_is_refused_not_made_a_file(
    team: Team, tools: Tools
) -> None:
    for path in ("newdir/", "newdir/.", "newdir/sub/.."):
        with pytest.raises(RetriableError, match="names a folder .* workspace_mkdir"):
            tools["workspace_write"](path, "x")
    assert not (tree_of(team) / "newdir").exists()


def test_text_with_a_lone_surrogate_is_refused_saying_where_and_nothing_is_written(
    team: Team, tools: Tools
) -> None:
    said = "The new text of s.txt holds '\\udcff' at character 1, half of a pair"
    with pytest.raises(RetriableError, match=re.escape(said)):
        tools["workspace_write"]("s.txt", "x\udcff")
    assert not (tree_of(team) / "s.txt").exists()
    tools["workspace_write"]("s.txt", "plain\n")
    with pytest.raises(RetriableError, match="Nothing was written"):
        tools["workspace_edit"]("s.txt", "plain", "pl\ud800in")
    assert (tree_of(team) / "s.txt").read_text() == "plain\n"


def test_an_os_refusal_is_not_worded_as_a_path_escape(
    team: Team, tools: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(self: Filesystem, entries: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Filesystem, "write_many", denied)
    with pytest.raises(RetriableError) as refused:
        tools["workspace_write"]("new.txt", "x")
    message = str(refused.value)
    assert message.startswith("The path new.txt is fine, but the file is not replaceable")
    assert "Do not retry with another path" in message and "escapes" not in message


def test_every_accepted_file_change_is_announced_before_the_answer(
    team: Team, tools: Tools
) -> None:
    changes = events_of(team, WorkspaceChangeEvent)  # emitted before each write answered
    assert [(e.agent, e.op, e.path, e.action, e.added) for e in changes] == [
        ("@Dev", "write", "src/app.py", "created", 4),
        ("@Dev", "write", "src/util.py", "created", 2),
        ("@Dev", "write", "README.md", "created", 2),
    ]
    assert {e.workspace for e in changes} == {f"alice/_team/{team.orchestrator.team_id}"}


def png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_view_resizes_with_pillow_and_caches_beside_the_tree(team: Team, tools: Tools) -> None:
    (tree_of(team) / "big.png").write_bytes(png(3000, 1000))
    note, image = tools["workspace_view"]("big.png")
    assert note == "big.png: resized from 3000x1000 to 1568x523"
    assert isinstance(image, BinaryContent) and image.media_type == "image/png"
    from PIL import Image

    assert Image.open(io.BytesIO(image.data)).size == (1568, 523)
    again, _ = tools["workspace_view"]("big.png")
    assert again == "big.png: resized (cached)"
    with pytest.raises(RetriableError, match="is not an image"):
        tools["workspace_view"]("README.md")


def test_without_pillow_view_sends_the_original_and_warns_once(
    team: Team, tools: Tools, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    data = png(40, 20)
    (tree_of(team) / "small.png").write_bytes(data)
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setattr(readers_module, "_vision_warned", False)
    with caplog.at_level(logging.WARNING, logger="akgentic.tool.workspace"):
        for _ in range(2):
            note, image = tools["workspace_view"]("small.png")
            assert note == "small.png: not resized (the 'vision' extra is not installed)"
            assert isinstance(image, BinaryContent) and image.data == data
    warnings = [
        r
        for r in caplog.records
        if "image resizing for workspace_view is skipped" in r.getMessage()
    ]
    assert len(warnings) == 1


def test_capabilities_follow_their_params_and_channels(team: Team) -> None:
    card = WorkspaceTool(
        workspace_list=WorkspaceList(max_entries=1, expose={TOOL_CALL, COMMAND}),
        workspace_write=WorkspaceWrite(instructions="Write only Markdown files."),
        workspace_search=False,
    )
    member = add_member(team, "@Dev", card)
    factory = factory_of(team, member)
    tools = {t.__name__: t for t in factory.get_tools()}
    assert "workspace_search" not in tools and "workspace_exec" not in tools
    assert (tools["workspace_write"].__doc__ or "").endswith("Write only Markdown files.")
    registry = factory.get_command_registry()
    assert "workspace_list" in registry.names()
    tools["workspace_write"]("a.md", "a")
    tools["workspace_write"]("b.md", "b")
    assert tools["workspace_list"]().endswith("[… listing cut at 1 entries]")
    actor = team.system.get_actor(tool_address(team, card_of(team, member).workspace.actor_name))
    assert isinstance(actor, WorkspaceActor) and actor.config.search is False


def test_the_card_round_trips_and_carries_no_runtime_state(team: Team) -> None:
    card = WorkspaceTool(workspace_id="notes", git_journal=True, workspace_exec=True)
    back = deserialize(serialize(card))
    assert back == card and isinstance(back, WorkspaceTool)
    member = add_member(team, "@Dev", card.model_copy())
    wired = card_of(team, member)
    assert deserialize(serialize(wired)) == card  # the bound tree and actor are private


def test_a_card_without_a_team_fails_at_wiring_not_at_first_use() -> None:
    class Loner:
        def notify_event(self, event: object) -> None: ...

    with pytest.raises(TypeError, match="WorkspaceTool needs an ActorToolObserver"):
        ToolFactory([WorkspaceTool()], observer=Loner())


def test_exec_tool_is_refused_pointing_at_the_real_workspace_tool() -> None:
    with pytest.raises(
        ImportError, match=r"use WorkspaceTool\(workspace_exec=\.\.\.\) from akgentic\.tool"
    ):
        exec("from akgentic.tool.sandbox import ExecTool")
    from akgentic.tool import WorkspaceTool as Exported

    assert Exported(workspace_exec=True).workspace_exec is not False
    assert tools_of is not None  # the re-exported helper module stays importable


def test_a_name_that_is_not_utf8_breaks_no_tool_and_is_listed_as_unreachable(
    team: Team, tools: Tools
) -> None:
    """A command can make a file or folder whose name is not UTF-8 (an archive's old
    encoding, a test's fixture). The path rule refuses such names, so no tool can reach it —
    and its name made every search fail and a folder holding it undeletable."""
    tree = tree_of(team)
    tools["workspace_write"]("d/a.txt", "hello\n")
    (tree / "d" / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"hello from latin-1\n")
    (tree / os.fsdecode(b"old\xff")).mkdir()
    assert tools["workspace_search"]("hello").startswith("d/a.txt:1-1")
    assert tools["workspace_grep"]("hello") == "d/a.txt:1: hello"
    unreachable = "(its name is not UTF-8 text: no tool can reach it; rename it with a command)"
    assert tools["workspace_list"]("d").splitlines() == [
        "d/",
        "a.txt (6 bytes)",
        f"caf\ufffd.txt {unreachable}",
    ]
    assert f"old\ufffd/ {unreachable}" in tools["workspace_list"]().splitlines()
    assert tools["workspace_delete"]("d", recursive=True) == "Deleted: deleted d; deleted d/a.txt."
    assert not (tree / "d").exists()


def test_workspace_delete_of_a_symlink_says_so_and_keeps_the_target(
    team: Team, tools: Tools
) -> None:
    os.symlink("README.md", tree_of(team) / "a.txt")
    said = tools["workspace_delete"]("a.txt")
    assert said == "Deleted the symlink a.txt (it pointed to 'README.md', which is left as it is)."
    assert not os.path.lexists(tree_of(team) / "a.txt")
    assert (tree_of(team) / "README.md").read_text() == "# App\nRun main().\n"


# -- inside a ToolsetCard, every text names the tools as the model calls them ---------------------


def _in_a_set(team: Team) -> tuple[Tools, Path]:
    """The tools of a WorkspaceTool inside the ToolsetCard ``files`` (by their own names:
    the model calls them ``files_workspace_…``), and the tree."""
    member = add_member(
        team, "@Filer", ToolsetCard(name="files", description="files", cards=[WorkspaceTool()])
    )
    [toolset] = factory_of(team, member).tool_cards
    assert isinstance(toolset, ToolsetCard)
    [card] = toolset.cards
    assert isinstance(card, WorkspaceTool) and card.called_as("workspace_read") == (
        "files_workspace_read"
    )
    return {tool.__name__: tool for tool in card.get_tools()}, card.workspace.tree


def test_in_a_set_the_gates_refusal_names_the_tools_as_the_model_calls_them(team: Team) -> None:
    """The write gate's refusals are worded by the tree's actor, not the card: in a set they
    said 'Read a.txt with workspace_read', a tool the model does not have."""
    tools, tree = _in_a_set(team)
    (tree / "a.txt").write_text("made by hand\n")
    with pytest.raises(GateRefusalError) as refused:
        tools["workspace_write"]("a.txt", "mine\n")
    assert str(refused.value).endswith(
        "Read a.txt with files_workspace_read first (or change part of it with "
        "files_workspace_edit), then retry."
    )
    tools["workspace_read"]("a.txt")
    (tree / "a.txt").write_text("changed by hand\n")
    with pytest.raises(GateRefusalError) as changed:
        tools["workspace_edit"]("a.txt", "changed", "edited")
    assert str(changed.value).endswith(
        "Read a.txt again with files_workspace_read, then redo your change on what it holds now."
    )
    with pytest.raises(RetriableError) as folder:
        tools["workspace_write"]("notes/", "x\n")
    assert "make a folder with files_workspace_mkdir." in str(folder.value)


def test_in_a_set_a_path_error_names_the_tools_as_the_model_calls_them(team: Team) -> None:
    """The error table (``path_error``) is shared by the card and the tree's actor: in a set
    it said 'workspace_list shows what is in it', a tool the model does not have."""
    tools, tree = _in_a_set(team)
    (tree / "sub").mkdir()
    with pytest.raises(RetriableError) as folder:
        tools["workspace_write"]("sub", "x\n")  # worded by the tree's actor
    assert (
        str(folder.value)
        == "sub is a directory; name a file (files_workspace_list shows what is in it)"
    )
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(RetriableError) as binary:
        tools["workspace_read"]("blob.bin")  # worded by the reader
    assert str(binary.value).endswith("use files_workspace_view for images")
    with pytest.raises(RetriableError) as escape:
        tools["workspace_read"]("../x")  # one message for every set: no tool named
    assert str(escape.value).startswith("Path escapes workspace root")
