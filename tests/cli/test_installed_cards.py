"""A team whose card comes from an installed distribution (an ``akgentic.tools`` entry
point) is resumed in a new process with no ``--import``: the stored card names the card's
class, and the entry point that declares it is loaded to read it."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from tests.catalog.distributions import make_distribution
from tests.cli.conftest import AKGENTIC, child_env, run_child


def test_a_team_with_an_installed_card_resumes_in_a_new_process(
    tmp_path: Path, storage_url: str
) -> None:
    dist = make_distribution(tmp_path / "site", class_name=f"Jira{uuid.uuid4().hex[:8]}")
    card_file = tmp_path / "team.yaml"
    card_file.write_text(
        "name: installed\nentry_point: '@A'\n"
        "members:\n  - card: {role: A, config: {name: '@A', tools: [jira]}}\n"
    )
    env = child_env(storage_url)
    env["PYTHONPATH"] = os.pathsep.join([str(dist.root), env["PYTHONPATH"]])

    ran = run_child([str(AKGENTIC), "run", str(card_file), "-m", "hello"], env=env)
    assert ran.returncode == 0, ran.stderr
    found = re.search(r"resume it with: akgentic teams resume (\w+)", ran.stdout)
    assert found, ran.stdout

    resumed = run_child([str(AKGENTIC), "teams", "resume", found.group(1), "-m", "again"], env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "answer:" in resumed.stdout
    assert "error" not in resumed.stderr.lower()
