"""akgentic.tool.skill — SkillTool: the menu in the prefix, the bodies on demand.

See README.md beside this file for every field with what it costs, the menu as rendered,
the loading model and the failure modes.
"""

from akgentic.tool.skill.loader import (
    LoadError,
    LoadResult,
    SkillFileError,
    SkillsSkippedEvent,
    assemble,
    load_skills,
    parse_skill_file,
)
from akgentic.tool.skill.tool import (
    DEFAULT_PART_CHARS,
    MENU_HEADER,
    NO_SKILLS,
    SKILLS_DIR_ENV,
    USE_SKILL,
    VIEW_HEADER,
    SkillEntry,
    SkillRow,
    Skills,
    SkillTool,
    SkillView,
    menu_header,
    render_menu,
    render_part,
    skill_folders,
    split_parts,
    view_header,
)

__all__ = [
    "DEFAULT_PART_CHARS",
    "MENU_HEADER",
    "NO_SKILLS",
    "SKILLS_DIR_ENV",
    "USE_SKILL",
    "VIEW_HEADER",
    "LoadError",
    "LoadResult",
    "SkillEntry",
    "SkillFileError",
    "SkillRow",
    "SkillTool",
    "SkillView",
    "Skills",
    "SkillsSkippedEvent",
    "assemble",
    "load_skills",
    "menu_header",
    "parse_skill_file",
    "render_menu",
    "render_part",
    "skill_folders",
    "split_parts",
    "view_header",
]
