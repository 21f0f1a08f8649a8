"""akgentic.tool.skill — SkillTool: the menu in the prefix, the bodies on demand.

See README.md beside this file for every field with what it costs, the menu as rendered,
the loading model and the failure modes.
"""

from akgentic.tool.skill.loader import (
    LoadError,
    LoadResult,
    SkillFileError,
    load_skills,
    parse_skill_file,
)
from akgentic.tool.skill.tool import (
    MENU_HEADER,
    NO_SKILLS,
    SkillEntry,
    Skills,
    SkillTool,
    render_menu,
)

__all__ = [
    "MENU_HEADER",
    "NO_SKILLS",
    "LoadError",
    "LoadResult",
    "SkillEntry",
    "SkillFileError",
    "SkillTool",
    "Skills",
    "load_skills",
    "parse_skill_file",
    "render_menu",
]
