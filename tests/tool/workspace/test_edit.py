"""The edit cascade and unified patches: computed in memory, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.tool.errors import RetriableError
from akgentic.tool.workspace import (
    STRATEGIES,
    EditError,
    EditFile,
    EditItem,
    EditMatcher,
    EditSpec,
    HunkContextError,
    Identity,
    PatchError,
    PatchFiles,
    WriteFile,
    WriteGate,
    parse_patch,
    render_file_patch,
)
from akgentic.tool.workspace.edit import apply_edits
from akgentic.tool.workspace.workspace import KIND_ID, resolve_workspace_path

CODE = """def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def count(items):
    return len(items)
"""


def replace(content: str, old: str, new: str, replace_all: bool = False) -> tuple[str, str]:
    text, strategy, _ = EditMatcher().replace(content, EditSpec(old, new, replace_all))
    return text, strategy


def test_the_cascade_has_seven_strategies_strictest_first() -> None:
    assert STRATEGIES == (
        "exact",
        "trimmed_boundary",
        "indentation_flexible",
        "line_trimmed",
        "whitespace_normalized",
        "escape_normalized",
        "block_anchor",
    )


@pytest.mark.parametrize(
    ("old", "new", "strategy", "expect"),
    [
        # 1. exact
        ("result += item.price", "result += item.cost", "exact", "        result += item.cost\n"),
        # 2. the model wrapped old_string in blank lines / spaces
        (
            "\n\n   return len(items)  \n",
            "return len(list(items))",
            "trimmed_boundary",
            "    return len(list(items))\n",
        ),
        # 3. the right lines at the wrong indentation: the replacement is shifted the same way
        (
            "for item in items:\n    result += item.price",
            "for item in items:\n    if item:\n        result += item.price",
            "indentation_flexible",
            "    for item in items:\n        if item:\n            result += item.price\n",
        ),
        # 4. drifting indentation line by line
        (
            "  result = 0\n      for item in items:",
            "    result = 1\n    for item in items:",
            "line_trimmed",
            "    result = 1\n    for item in items:\n",
        ),
        # 5. whitespace inside the line differs
        (
            "result  +=   item.price",
            "result -= item.price",
            "whitespace_normalized",
            "        result -= item.price\n",
        ),
        # 6. double-escaped arguments
        (
            "def count(items):\\n    return len(items)",
            "def count(items):\\n    return 0",
            "escape_normalized",
            "def count(items):\n    return 0\n",
        ),
        # 7. first and last lines right, the middle nearly so
        (
            "def total(items):\n    result = 0\n    for itm in items:\n"
            "        result += itm.price\n    return result",
            "def total(items):\n    return sum(i.price for i in items)",
            "block_anchor",
            "def total(items):\n    return sum(i.price for i in items)\n",
        ),
    ],
)
def test_each_strategy_of_the_cascade(old: str, new: str, strategy: str, expect: str) -> None:
    text, used = replace(CODE, old, new)
    assert used == strategy
    assert expect in text


def test_an_ambiguous_match_is_refused_naming_the_candidate_lines() -> None:
    content = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(EditError, match=r"matches 2 places in the file \(lines 1, 3\)"):
        replace(content, "x = 1", "x = 3")
    assert replace(content, "x = 1", "x = 3", replace_all=True)[0] == "x = 3\ny = 2\nx = 3\n"


def test_an_ambiguous_tolerant_match_is_refused_too() -> None:
    content = "    a()\n\n        a()\n"
    with pytest.raises(EditError, match=r"lines 1, 3"):
        replace(content, "  a()  \n", "b()")


def test_not_found_shows_the_closest_text() -> None:
    with pytest.raises(EditError) as missing:
        replace(CODE, "for element in items:\n        result += element.price", "x")
    message = str(missing.value)
    assert "old_string was not found in the file" in message
    assert "The closest text is at line 3" in message
    assert "copy old_string exactly" in message


def test_empty_and_no_op_edits_are_refused() -> None:
    with pytest.raises(EditError, match="old_string is empty"):
        replace(CODE, "", "x")
    with pytest.raises(EditError, match="the same"):
        replace(CODE, "count", "count")


def test_multi_edit_applies_in_order_or_not_at_all() -> None:
    edits = [EditSpec("result = 0", "result = 1"), EditSpec("result = 1", "result = 2")]
    text, used = apply_edits(CODE, edits)
    assert "result = 2" in text and used == ["exact", "exact"]
    with pytest.raises(
        EditError, match=r"edit 2 of 2: old_string was not found.*No edit was applied"
    ):
        apply_edits(CODE, [EditSpec("result = 0", "result = 1"), EditSpec("nowhere", "x")])


# -- patches -------------------------------------------------------------------------------------

ORIGINAL = "alpha\nbeta\ngamma\ndelta\nepsilon\n"


def apply(original: str | None, patch: str) -> str | None:
    [file] = parse_patch(patch)
    return render_file_patch(original, file)


def test_a_patch_applies_with_its_context_verified() -> None:
    patch = "--- a/g.txt\n+++ b/g.txt\n@@ -2,3 +2,3 @@\n beta\n-gamma\n+GAMMA\n delta\n"
    assert apply(ORIGINAL, patch) == "alpha\nbeta\nGAMMA\ndelta\nepsilon\n"


def test_a_hunk_whose_line_numbers_drifted_still_applies_where_its_context_is() -> None:
    patch = "--- a/g.txt\n+++ b/g.txt\n@@ -1,3 +1,3 @@\n gamma\n-delta\n+DELTA\n epsilon\n"
    assert apply(ORIGINAL, patch) == "alpha\nbeta\ngamma\nDELTA\nepsilon\n"


def test_a_patch_with_wrong_context_is_refused_saying_what_the_file_holds() -> None:
    patch = "--- a/g.txt\n+++ b/g.txt\n@@ -2,3 +2,3 @@\n beta\n-GAMMA?\n+x\n delta\n"
    with pytest.raises(HunkContextError) as refused:
        apply(ORIGINAL, patch)
    message = str(refused.value)
    assert "hunk 1 of g.txt (@@ -2,3 @@) does not match the file" in message
    assert (
        "it expects\nbeta\nGAMMA?\ndelta\nbut line 2 onwards holds\nbeta\ngamma\ndelta" in message
    )


def test_creating_deleting_and_the_missing_final_newline() -> None:
    assert apply(None, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n") == "one\ntwo\n"
    assert apply("one\n", "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n") is None
    no_eol = "--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-one\n+uno\n\\ No newline at end of file\n"
    assert apply("one\n", no_eol) == "uno"
    with pytest.raises(PatchError, match="already exists"):
        apply("x\n", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+one\n")


@pytest.mark.parametrize(
    ("patch", "says"),
    [
        ("just some text\n", "no file in the patch"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n", "short by 1 old and 1 new line; check"),
        ("@@ -1 +1 @@\n-a\n+b\n", "a hunk before any"),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n*a\n+b\n", "must start with"),
    ],
)
def test_malformed_patches_say_what_is_wrong(patch: str, says: str) -> None:
    with pytest.raises(PatchError, match=says):
        parse_patch(patch)


# -- through the gate: nothing is written unless everything applies --------------------------


@pytest.fixture
def gate(tmp_path: Path) -> WriteGate:
    gate = WriteGate(resolve_workspace_path(kind=KIND_ID, leaf="edit", root=tmp_path))
    gate.mutate(ME, WriteFile(path="g.txt", content=ORIGINAL))
    gate.mutate(ME, WriteFile(path="h.txt", content="one\ntwo\n"))
    return gate


ME = Identity(name="@Editor")


def test_a_multi_file_patch_with_one_bad_hunk_writes_nothing(gate: WriteGate) -> None:
    patch = (
        "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n"
        "--- a/h.txt\n+++ b/h.txt\n@@ -2 +2 @@\n-three\n+THREE\n"
    )
    with pytest.raises(RetriableError, match="The patch does not apply: hunk 1 of h.txt"):
        gate.mutate(ME, PatchFiles(patch=patch))
    assert (gate.fs.root / "g.txt").read_text() == ORIGINAL
    good = patch.replace("-three\n+THREE", "-two\n+TWO")
    outcome = gate.mutate(ME, PatchFiles(patch=good))
    assert [(c.path, c.added, c.removed) for c in outcome.changes] == [
        ("g.txt", 1, 1),
        ("h.txt", 1, 1),
    ]
    assert (gate.fs.root / "h.txt").read_text() == "one\nTWO\n"


def test_a_failed_multi_edit_writes_nothing(gate: WriteGate) -> None:
    edits = [
        EditItem(old_string="alpha", new_string="A"),
        EditItem(old_string="zeta", new_string="Z"),
    ]
    with pytest.raises(RetriableError, match="edit 2 of 2"):
        gate.mutate(ME, EditFile(op="multi_edit", path="g.txt", edits=edits))
    assert (gate.fs.root / "g.txt").read_text() == ORIGINAL


def test_a_patch_that_renames_or_escapes_is_refused(gate: WriteGate) -> None:
    with pytest.raises(RetriableError, match="renames are not supported"):
        gate.mutate(ME, PatchFiles(patch="--- a/g.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-alpha\n+a\n"))
    with pytest.raises(PermissionError):
        gate.mutate(ME, PatchFiles(patch="--- /dev/null\n+++ b/../../x.txt\n@@ -0,0 +1 @@\n+x\n"))
