"""Skill loading: SKILL.md frontmatter or YAML; broken files reported, never fatal; the
first of two duplicate names wins."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from akgentic.tool import TOOL_CALL
from akgentic.tool.skill import (
    LoadError,
    SkillEntry,
    SkillFileError,
    Skills,
    load_skills,
    parse_skill_file,
)

SKILL_MD = """---
name: refund-policy
description: How refunds are approved.
license: MIT
---

# Refunds

Refunds under 100 EUR are approved by the agent handling the case.
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_skill_md_frontmatter_and_body(tmp_path: Path) -> None:
    path = write(tmp_path, "refund/SKILL.md", SKILL_MD)
    assert parse_skill_file(path) == SkillEntry(
        name="refund-policy",
        description="How refunds are approved.",
        content="# Refunds\n\nRefunds under 100 EUR are approved by the agent handling the case.",
    )


@pytest.mark.parametrize("key", ["body", "content"])
def test_yaml_with_body_or_content(tmp_path: Path, key: str) -> None:
    path = write(tmp_path, "lint.yml", f"name: lint\ndescription: Run it.\n{key}: |\n  Lint.\n")
    assert parse_skill_file(path) == SkillEntry(name="lint", description="Run it.", content="Lint.")


def test_yaml_without_body_has_empty_content(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", "name: x\ndescription: d\n")
    assert parse_skill_file(path).content == ""


def test_directories_are_searched_recursively_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path, "b/SKILL.md", SKILL_MD.replace("refund-policy", "b-skill"))
    write(tmp_path, "a/deep/SKILL.md", SKILL_MD.replace("refund-policy", "a-skill"))
    write(tmp_path, "c.yaml", "name: c-skill\ndescription: d\nbody: c\n")
    write(tmp_path, "notes/README.md", "# not a skill, not picked up\n")
    result = load_skills([tmp_path])
    assert [s.name for s in result.skills] == ["a-skill", "b-skill", "c-skill"]
    assert result.errors == []


@pytest.mark.parametrize(
    ("relative", "text", "reason"),
    [
        ("SKILL.md", "no frontmatter here", "has no YAML frontmatter"),
        ("SKILL.md", "---\nname: x\n", "not closed"),
        (
            "SKILL.md",
            "---\nname: [x\ndescription: d\n---\n",
            "the frontmatter is not valid YAML: expected ',' or ']', but got ':' at line 3, "
            "column 12 (while parsing a flow sequence at line 2, column 7)",
        ),
        ("SKILL.md", "---\n- a list\n---\n", "must be a mapping"),
        ("x.yaml", "name: x\ndescription: &d [*d]\nbody: a\n", "the data contains itself"),
        ("SKILL.md", "---\ndescription: d\n---\nbody", "'name' is missing"),
        ("SKILL.md", "---\nname: 3\ndescription: d\n---\n", "'name' must be text"),
        ("SKILL.md", "---\nname: x\ndescription: ''\n---\n", "description"),
        ("x.yaml", "name: x\ndescription: d\nbody: a\ncontent: b\n", "both 'body' and 'content'"),
        ("x.yaml", "name: x\ndescription: d\nbody: [1, 2]\n", "content must be text"),
    ],
)
def test_a_broken_file_is_reported_and_skipped(
    tmp_path: Path, relative: str, text: str, reason: str
) -> None:
    broken = write(tmp_path, f"broken/{relative}", text)
    write(tmp_path, "good/SKILL.md", SKILL_MD)
    result = load_skills([tmp_path])
    assert [s.name for s in result.skills] == ["refund-policy"]
    (error,) = result.errors
    assert error.path == str(broken)
    assert reason in error.reason
    with pytest.raises(SkillFileError, match=re.escape(reason)):
        parse_skill_file(broken)


def test_unreadable_and_missing_paths_are_reported(tmp_path: Path) -> None:
    binary = tmp_path / "bad.yaml"
    binary.write_bytes(b"name: x\n\xff\xfe\x00name")
    good = write(tmp_path, "good/SKILL.md", SKILL_MD)
    result = load_skills([binary, tmp_path / "missing", good])
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [
        LoadError(
            path=str(binary),
            reason="line 2: not UTF-8 text (byte 0xff at offset 8): save the skill file as UTF-8",
        ),
        LoadError(path=str(tmp_path / "missing"), reason="no such file or directory"),
    ]


def test_duplicate_names_the_first_wins_and_the_duplicate_is_reported(tmp_path: Path) -> None:
    first = write(tmp_path, "a/SKILL.md", SKILL_MD)
    second = write(tmp_path, "b/SKILL.md", SKILL_MD.replace("How refunds", "Other refunds"))
    result = load_skills([tmp_path])
    (skill,) = result.skills
    assert skill.description == "How refunds are approved."
    assert result.errors == [
        LoadError(
            path=str(second),
            reason=f"duplicate skill name 'refund-policy': in {second} and in {first}; kept "
            f"{first} (it was loaded first) and skipped the other — rename one of them",
        )
    ]


def test_a_stray_folder_never_replaces_the_skill_named_after_its_folder(tmp_path: Path) -> None:
    """``broken3/`` sorts before ``plan-work/``; its SKILL.md claiming ``plan-work`` used to
    win silently. The folder named after the skill wins, and one line names both."""
    real = write(tmp_path, "plan-work/SKILL.md", SKILL_MD.replace("refund-policy", "plan-work"))
    stray = write(
        tmp_path,
        "broken3/SKILL.md",
        SKILL_MD.replace("refund-policy", "plan-work").replace("How refunds", "Stray"),
    )
    result = load_skills([tmp_path])
    (skill,) = result.skills
    assert (skill.name, skill.description) == ("plan-work", "How refunds are approved.")
    (error,) = result.errors
    assert error == LoadError(
        path=str(stray),
        reason=f"duplicate skill name 'plan-work': in {stray} and in {real}; kept {real} (it "
        f"is named after the skill) and skipped the other — rename one of them",
    )
    assert "\n" not in error.reason
    # named after it first: the stray one, later, is skipped just the same
    later = write(tmp_path, "zz/SKILL.md", SKILL_MD.replace("refund-policy", "plan-work"))
    again = load_skills([tmp_path])
    assert [s.description for s in again.skills] == ["How refunds are approved."]
    assert [e.path for e in again.errors] == [str(stray), str(later)]
    assert "kept " + str(real) + " (it is named after the skill)" in again.errors[1].reason


def test_explicit_paths_keep_their_order(tmp_path: Path) -> None:
    late = write(tmp_path, "z.yaml", "name: same\ndescription: from z\n")
    early = write(tmp_path, "a.yaml", "name: same\ndescription: from a\n")
    result = load_skills([late, early])
    assert [s.description for s in result.skills] == ["from z"]


def test_skills_from_paths_logs_and_skips(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(tmp_path, "good/SKILL.md", SKILL_MD)
    write(tmp_path, "bad/SKILL.md", "broken")
    with caplog.at_level(logging.WARNING, logger="akgentic.tool.skill.tool"):
        skills = Skills.from_paths([tmp_path])
    assert [s.name for s in skills.skills] == ["refund-policy"]
    assert "has no YAML frontmatter" in caplog.text
    assert Skills.from_paths([tmp_path], expose={TOOL_CALL}).expose == {TOOL_CALL}
