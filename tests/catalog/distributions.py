"""Throwaway distributions for discovery: a package and its dist-info in a folder that a
test puts on ``sys.path`` (or a child process on ``PYTHONPATH``) — what ``pip install``
leaves behind, so ``importlib.metadata`` finds the ``akgentic.tools`` entry points."""

from __future__ import annotations

import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path

TOOL_MODULE = '''
from typing import ClassVar
from akgentic.catalog import ToolManifest, register_tool
from akgentic.tool.core import ToolCard


@register_tool
class {class_name}(ToolCard):
    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="{type_name}", description="Read and comment on Jira issues.", access="write"
    )
    site: str = "https://jira.example"

    def get_tools(self):
        def jira_issue(key: str) -> str:
            """Read one issue."""
            return f"issue {{key}} on {{self.site}}"

        return [jira_issue]
'''


@dataclass
class Distribution:
    """A distribution made for one test: its folder, package and entry-point type name."""

    root: Path
    package: str
    type_name: str

    def forget(self) -> None:
        """Drop the package from this process's modules (the folder is the test's)."""
        for name in [
            m for m in sys.modules if m == self.package or m.startswith(f"{self.package}.")
        ]:
            del sys.modules[name]


def make_distribution(
    root: Path,
    *,
    type_name: str = "jira",
    class_name: str = "JiraTool",
    entry_point: str | None = None,
    module_source: str | None = None,
) -> Distribution:
    """Write ``<package>/__init__.py`` and ``<package>-1.0.dist-info`` under ``root``.

    ``entry_point`` is the entry point's value, ``{package}`` standing for the package
    (default: the package's card class, ``class_name``)."""
    package = f"acme_tools_{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True, exist_ok=True)
    (root / package).mkdir()
    source = (
        module_source
        if module_source is not None
        else TOOL_MODULE.format(type_name=type_name, class_name=class_name)
    )
    (root / package / "__init__.py").write_text(textwrap.dedent(source))
    info = root / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    value = (entry_point or f"{{package}}:{class_name}").format(package=package)
    (info / "entry_points.txt").write_text(f"[akgentic.tools]\n{type_name} = {value}\n")
    return Distribution(root=root, package=package, type_name=type_name)
