"""A team made of a card an installed distribution declares (an ``akgentic.tools`` entry
point) reads back on a server that has not loaded that distribution — a server started
after the team ran: its log names the card's class, and the entry point that declares it
is loaded to read it (never a module the data names)."""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pytest

from akgentic.server import ServerSettings
from akgentic.storage import sqlite_url
from tests.catalog.distributions import make_distribution
from tests.cli.conftest import AKGENTIC, child_env, run_child
from tests.server.conftest import serve_cards


def test_a_servers_log_of_a_team_with_an_installed_card_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"Jira{uuid.uuid4().hex[:8]}"
    dist = make_distribution(tmp_path / "site", class_name=name)
    folder = tmp_path / "server"
    folder.mkdir()
    card_file = tmp_path / "team.yaml"
    card_file.write_text(
        "name: installed\nentry_point: '@A'\n"
        "members:\n  - card: {role: A, config: {name: '@A', tools: [jira]}}\n"
    )
    env = child_env(sqlite_url(folder / "server.db"))
    env["PYTHONPATH"] = os.pathsep.join([str(dist.root), env["PYTHONPATH"]])
    ran = run_child([str(AKGENTIC), "run", str(card_file), "-m", "hello"], env=env)
    assert ran.returncode == 0, ran.stderr
    found = re.search(r"\((\w{8})\) started", ran.stdout)
    assert found, ran.stdout

    monkeypatch.syspath_prepend(str(dist.root))  # installed here too, not imported
    assert dist.package not in sys.modules
    serving = serve_cards(folder, ServerSettings(port=0), cards=())
    served = next(serving)
    try:
        [info] = [t for t in served.client.list_teams() if str(t.team_id).startswith(found[1])]
        records = served.client.get_team(info.team_id).history(limit=1000)
        assert records and [r.error for r in records if r.error] == []
        assert dist.package in sys.modules  # its entry point, loaded to read the log
    finally:
        serving.close()
        dist.forget()
