"""``akgentic catalog ...``: listing, the audited admin commands, credentials read from a
prompt or stdin and shown only as "set", probes, and discovery through an entry point of a
distribution installed for a child process."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from akgentic.catalog import SecretBox
from akgentic.cli import app
from akgentic.cli.store import unmade_on_failure
from akgentic.storage import CatalogAuditEntry, open_storage, sqlite_path, sqlite_url
from tests.catalog.distributions import make_distribution
from tests.catalog.loopback import free_port, serving
from tests.cli.conftest import AKGENTIC, Invoke, child_env, run_child

SECRET = "qd-cli-SECRET-93ab71"


@pytest.fixture(autouse=True)
def _operator(monkeypatch: pytest.MonkeyPatch) -> str:
    key = os.urandom(32).hex()
    monkeypatch.setenv("AKGENTIC_SECRET_KEY", key)
    monkeypatch.setenv("LOGNAME", "alice")
    return key


def rows(output: str) -> dict[str, list[str]]:
    """The listing's rows by name, as cells (columns are two or more spaces apart)."""
    table = [re.split(r"\s{2,}", line.strip()) for line in output.splitlines()[1:] if line]
    return {cells[0]: cells for cells in table if not cells[0].startswith(("orphaned", "warn"))}


def test_list_shows_every_type_off_until_an_admin_enables_it(cli: Invoke) -> None:
    listed = cli("catalog", "list")
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines()[0].split() == [
        "NAME",
        "TYPE",
        "KIND",
        "ENABLED",
        "CREDENTIAL",
        "STATUS",
    ]
    table = rows(listed.output)
    assert table["planning"] == ["planning", "planning", "card", "off", "-", "-"]
    assert table["vector.qdrant"] == [
        "vector.qdrant",
        "vector.qdrant",
        "service",
        "off",
        "not set",
        "unchecked",
    ]

    enabled = cli("catalog", "enable", "planning", "--surface", "agents", "--surface", "cli")
    assert enabled.exit_code == 0 and enabled.output == "planning: enabled for agents, cli\n"
    disabled = cli("catalog", "disable", "planning", "-s", "cli")
    assert disabled.output == "planning: enabled for agents\n"
    assert rows(cli("catalog", "list").output)["planning"][3] == "agents"

    trail = cli("catalog", "audit").output.splitlines()
    assert trail[0].split() == ["SEQ", "WHEN", "WHO", "ACTION", "TOOL", "DETAIL"]
    assert [line.split()[3:6] for line in trail[1:]] == [
        ["cli:alice", "enable", "planning"],
        ["cli:alice", "disable", "planning"],
    ]
    assert trail[1].endswith('{"surfaces": ["agents", "cli"]}')


def test_a_credential_is_read_from_stdin_and_shown_only_as_set(
    cli: Invoke, storage_url: str, _operator: str
) -> None:
    stored = cli("catalog", "set-credential", "vector.qdrant", input=f"{SECRET}\n")
    assert stored.exit_code == 0, stored.output
    assert stored.output == "vector.qdrant: credential set\n"
    shown = cli("catalog", "show", "vector.qdrant")
    assert "credential: set (api_key)" in shown.output and "settings:   url" in shown.output
    for output in (shown.output, cli("catalog", "list").output, cli("catalog", "audit").output):
        assert SECRET not in output
    assert '{"credential": "set"}' in cli("catalog", "audit", "vector.qdrant").output

    store = open_storage(storage_url)
    try:
        row = store.catalog.get("vector.qdrant")
        assert row is not None and row.credential_enc is not None
        secret = SecretBox(bytes.fromhex(_operator)).open(
            row.credential_enc, "catalog instance 'vector.qdrant' (vector.qdrant)"
        )
        assert secret == SECRET
    finally:
        store.close()

    cleared = cli("catalog", "set-credential", "vector.qdrant", "--clear")
    assert cleared.output == "vector.qdrant: credential not set\n"


def test_set_credential_from_an_environment_variable(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QDRANT_KEY", SECRET)
    assert (
        cli("catalog", "set-credential", "vector.qdrant", "--from-env", "QDRANT_KEY").exit_code == 0
    )
    missing = cli("catalog", "set-credential", "vector.qdrant", "--from-env", "NOT_SET_ANYWHERE")
    assert missing.exit_code == 1
    assert (
        "error: --from-env NOT_SET_ANYWHERE: the variable is not set or is empty" in missing.output
    )


def test_without_a_key_setting_a_credential_says_how_to_make_one(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_SECRET_KEY")
    result = cli("catalog", "set-credential", "vector.qdrant", input=f"{SECRET}\n")
    assert result.exit_code == 1
    [line] = result.output.splitlines()
    assert line.startswith("error: catalog credentials are encrypted with AKGENTIC_SECRET_KEY")
    assert "secrets.token_hex(32)" in line and "Traceback" not in result.output
    assert cli("catalog", "enable", "planning").exit_code == 0  # no key needed there


def test_probe_a_reachable_and_an_unreachable_cluster(cli: Invoke) -> None:
    with serving() as service:
        service.routes["/v1/meta"] = (200, {"version": "1.30.2"})
        configured = cli(
            "catalog", "configure", "vector.weaviate", "--set", f"url={service.url}",
            "--set", "grpc_port=50051",
        )  # fmt: skip
        assert configured.exit_code == 0, configured.output
        assert json.loads(configured.output.split("config ", 1)[1]) == {
            "url": service.url,
            "grpc_port": 50051,
        }
        assert cli("catalog", "enable", "vector.weaviate", "-s", "cli").exit_code == 0
        ok = cli("catalog", "probe", "vector.weaviate")
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("vector.weaviate: active — Weaviate answered HTTP 200")
    assert rows(cli("catalog", "list").output)["vector.weaviate"][5].startswith("active ")

    down_url = f"http://127.0.0.1:{free_port()}"
    cli("catalog", "configure", "vector.weaviate", "--json", json.dumps({"url": down_url}))
    down = cli("catalog", "probe", "vector.weaviate", "--timeout", "5")
    assert down.exit_code == 1
    expected = f"vector.weaviate: error — Weaviate at {down_url}/v1/meta is unreachable"
    assert down.output.startswith(expected)
    assert rows(cli("catalog", "list").output)["vector.weaviate"][5].startswith("error ")
    assert "probe" not in cli("catalog", "audit").output  # probes are not admin changes


def test_probe_is_refused_until_the_tool_is_enabled_for_the_cli_and_administering_is_not(
    cli: Invoke,
) -> None:
    """The cli flag gates the CLI's use of an instance — a probe opens its credential on
    its outside exit — while every command that reads or administers the row works with
    every flag off (else none could be turned on)."""
    with serving() as service:
        service.routes["/collections"] = (200, {"result": {"collections": []}})
        administering = [
            ("catalog", "configure", "vector.qdrant", "--set", f"url={service.url}"),
            ("catalog", "set-credential", "vector.qdrant", "--stdin"),
            ("catalog", "show", "vector.qdrant"),
            ("catalog", "list"),
            ("catalog", "audit", "vector.qdrant"),
            ("catalog", "enable", "vector.qdrant", "-s", "agents", "-s", "api"),
        ]
        for args in administering:
            done = cli(*args, input=SECRET + "\n")
            assert done.exit_code == 0, (args, done.output)
        refused = cli("catalog", "probe", "vector.qdrant")
        assert refused.exit_code == 1
        assert refused.output == (
            "error: catalog tool 'vector.qdrant' is not enabled for cli: "
            "akgentic catalog enable vector.qdrant --surface cli\n"
        )
        assert service.seen == []  # refused before its credential was opened or used
        assert rows(cli("catalog", "list").output)["vector.qdrant"][5] == "unchecked"

        assert cli("catalog", "enable", "vector.qdrant", "-s", "cli").exit_code == 0
        probed = cli("catalog", "probe", "vector.qdrant")
        assert probed.exit_code == 0, probed.output
        assert probed.output.startswith("vector.qdrant: active — Qdrant answered HTTP 200")
        assert [headers.get("api-key") for _, headers in service.seen] == [SECRET]

        assert cli("catalog", "disable", "vector.qdrant", "-s", "cli").exit_code == 0
        again = cli("catalog", "probe", "vector.qdrant")
        assert again.exit_code == 1 and "not enabled for cli" in again.output
        assert len(service.seen) == 1
    assert cli("catalog", "remove", "vector.qdrant", "--force").exit_code == 0


def test_bad_input_gets_one_error_line(cli: Invoke) -> None:
    cases = [
        (
            ("catalog", "enable", "nothing"),
            "error: no tool type or catalog instance is called 'nothing'",
        ),
        (
            ("catalog", "configure", "vector.qdrant", "--json", "[1]"),
            "error: --json must be a JSON object",
        ),
        (
            ("catalog", "configure", "vector.qdrant", "--set", "url"),
            "error: --set 'url': write KEY=VALUE",
        ),
        (
            ("catalog", "configure", "vector.qdrant", "--set", "port=1"),
            "error: config of vector.qdrant does not validate",
        ),
        (("catalog", "probe", "planning"), "error: planning has no outside exit to probe"),
        (("catalog", "remove", "planning"), "error: no catalog instance 'planning' is stored"),
        (
            ("catalog", "enable", "planning", "-s", "chat"),
            "error: surfaces are agents, api, cli; unknown: chat",
        ),
    ]
    for args, expected in cases:
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith(expected), (args, result.output)
        assert "Traceback" not in result.output
    assert cli("catalog", "audit").output == "no catalog changes recorded\n"
    assert cli("catalog", "audit", "web_serch").output == (
        "no catalog changes recorded for 'web_serch' (akgentic catalog list names the tools)\n"
    )


@pytest.mark.parametrize("timeout", ["inf", "1e308", "121"])
def test_a_probe_timeout_beyond_the_api_s_bound_is_a_usage_error(cli: Invoke, timeout: str) -> None:
    cli("catalog", "configure", "vector.qdrant", "--set", f"url=http://127.0.0.1:{free_port()}")
    result = cli("catalog", "probe", "vector.qdrant", "--timeout", timeout)
    assert result.exit_code == 2, result.output  # refused before anything is tried
    assert "--timeout" in result.output and "120" in result.output, result.output
    assert "OverflowError" not in result.output and "Traceback" not in result.output


def configured(cli: Invoke, *args: str) -> dict[str, object]:
    """The config ``akgentic catalog configure mcp ARGS`` answers with."""
    result = cli("catalog", "configure", "mcp", *args)
    assert result.exit_code == 0, result.output
    loaded = json.loads(result.output.split("config ", 1)[1])
    assert isinstance(loaded, dict)
    return loaded


def test_configure_merges_one_setting_at_a_time_and_replaces_only_when_told(cli: Invoke) -> None:
    connection = {"stdio_command": "python3"}
    assert configured(cli, "--set", f"connection={json.dumps(connection)}") == {
        "connection": connection
    }
    # one key more: the stored connection stays (it was "connection: Field required")
    assert configured(cli, "--set", "max_result_chars=5000") == {
        "connection": connection,
        "max_result_chars": 5000,
    }
    assert configured(cli, "--json", '{"tool_prefix": "gl"}', "--unset", "max_result_chars") == {
        "connection": connection,
        "tool_prefix": "gl",
    }
    other = {"stdio_command": "node"}
    assert configured(cli, "--replace", "--set", f"connection={json.dumps(other)}") == {
        "connection": other
    }
    refused = cli("catalog", "configure", "mcp", "--unset", "tool_prefix")
    assert (refused.exit_code, refused.output) == (
        1,
        "error: cannot unset tool_prefix: not a stored setting of mcp (stored: connection)\n",
    )
    both = cli("catalog", "configure", "mcp", "--replace", "--unset", "connection")
    assert both.exit_code == 1 and both.output.startswith("error: --unset removes one stored")
    shown = cli("catalog", "show", "mcp").output
    assert 'config:     {"connection": {"stdio_command": "node"}}' in shown


def test_remove_takes_orphaned_rows_only_unless_forced(cli: Invoke) -> None:
    assert cli("catalog", "enable", "planning").exit_code == 0
    refused = cli("catalog", "remove", "planning")
    assert refused.exit_code == 1
    assert refused.output == (
        "error: catalog instance 'planning' is not orphaned (its type 'planning' is "
        "installed), so it is kept: disable it (akgentic catalog disable planning), or remove "
        "it with its config and credential (akgentic catalog remove planning --force)\n"
    )
    assert rows(cli("catalog", "list").output)["planning"][3] == "agents"
    removed = cli("catalog", "remove", "planning", "--force")
    assert (removed.exit_code, removed.output) == (0, "planning: removed\n")
    assert rows(cli("catalog", "list").output)["planning"][3] == "off"


def test_a_type_from_an_installed_distribution_is_listed_then_orphaned_when_removed(
    tmp_path: Path, storage_url: str
) -> None:
    dist = make_distribution(tmp_path / "site", type_name="jira")
    with_dist = child_env(storage_url, AKGENTIC_SECRET_KEY=os.urandom(32).hex())
    with_dist["PYTHONPATH"] = os.pathsep.join([str(dist.root), with_dist["PYTHONPATH"]])

    listed = run_child([str(AKGENTIC), "catalog", "list"], env=with_dist)
    assert listed.returncode == 0, listed.stderr
    assert rows(listed.stdout)["jira"] == ["jira", "jira", "card", "off", "-", "-"]
    shown = run_child([str(AKGENTIC), "catalog", "show", "jira"], env=with_dist)
    assert f"entry point jira = {dist.package}:JiraTool ({dist.package} 1.0)" in shown.stdout
    assert "tool:       jira_issue(key)" in shown.stdout
    enabled = run_child([str(AKGENTIC), "catalog", "enable", "jira"], env=with_dist)
    assert enabled.returncode == 0, enabled.stderr

    without = child_env(storage_url)  # the distribution is gone
    after = run_child([str(AKGENTIC), "catalog", "list"], env=without)
    assert after.returncode == 0, after.stderr
    assert "jira" not in rows(after.stdout)
    assert "orphaned: jira (type jira is not installed; ignored)" in after.stdout.splitlines()
    refused = run_child([str(AKGENTIC), "catalog", "enable", "jira", "-s", "api"], env=without)
    assert refused.returncode == 1
    assert "error: catalog instance 'jira' is orphaned" in refused.stderr
    removed = run_child([str(AKGENTIC), "catalog", "remove", "jira"], env=without)
    assert removed.stdout == "jira: removed\n"


def test_a_damaged_audit_line_is_shown_with_what_is_wrong_and_hides_no_other(
    cli: Invoke, storage_url: str
) -> None:
    for args in (("enable", "planning"), ("enable", "skill"), ("disable", "skill")):
        assert cli("catalog", *args).exit_code == 0
    with sqlite3.connect(sqlite_path(storage_url)) as db:  # hand-edited
        db.execute("UPDATE akgentic_catalog_audit SET detail = '{bad' WHERE seq = 1")
        db.execute("UPDATE akgentic_catalog_audit SET at = 'nope' WHERE seq = 2")

    shown = cli("catalog", "audit")
    assert shown.exit_code == 0, shown.output
    lines = {
        cells[0]: cells
        for cells in (re.split(r"\s{2,}", line) for line in shown.output.splitlines()[1:])
    }
    assert sorted(lines) == ["1", "2", "3"]
    assert lines["1"][5].startswith("(unreadable: catalog audit line 1: detail: the stored value")
    assert lines["2"][1] == "?" and "the stored time 'nope' is not a valid time" in lines["2"][5]
    assert lines["3"][3:] == ["disable", "skill", '{"surfaces": ["agents", "api", "cli"]}']


def test_list_says_each_discovery_problem_once(tmp_path: Path, storage_url: str) -> None:
    dist = make_distribution(tmp_path / "site", entry_point="{package}:NoSuchTool")
    env = child_env(storage_url)
    env["PYTHONPATH"] = os.pathsep.join([str(dist.root), env["PYTHONPATH"]])
    listed = run_child([str(AKGENTIC), "catalog", "list"], env=env)
    assert listed.returncode == 0, listed.stderr
    said = [line for line in listed.stderr.splitlines() if "NoSuchTool" in line]
    assert len(said) == 1, listed.stderr
    assert said[0].startswith("warning: ") and f"{dist.package}:NoSuchTool" in said[0]


def test_an_orphaned_row_s_credential_shows_as_set(cli: Invoke, storage_url: str) -> None:
    store = open_storage(storage_url)
    audit = CatalogAuditEntry(actor="cli:alice", action="set_credential")
    store.catalog.set_credential("old", "uninstalled.tool", b"\x01sealed", audit)
    store.close()
    shown = cli("catalog", "show", "old")
    assert shown.exit_code == 0, shown.output
    assert "credential: set\n" in shown.output  # kept with the row: removing it loses it
    assert "probe:      -\n" in shown.output  # not known without its type


def test_a_refused_change_creates_no_store_and_an_accepted_one_does(tmp_path: Path) -> None:
    """``enable nosuch`` fails: the store and the folders it would live in are not left
    behind; ``enable planning`` makes them."""
    store = tmp_path / "new" / "deep" / "store.db"
    runner = CliRunner()
    env = {"AKGENTIC_STORAGE": f"sqlite:///{store}", "AKGENTIC_MODEL": None}

    refused = runner.invoke(app, ["catalog", "enable", "nosuch"], env=env)
    assert refused.exit_code == 1
    assert "no tool type or catalog instance is called 'nosuch'" in refused.stderr
    assert list(tmp_path.iterdir()) == []

    done = runner.invoke(app, ["catalog", "enable", "planning"], env=env)
    assert done.exit_code == 0, done.output
    assert store.is_file()


def test_a_failed_change_leaves_a_store_path_that_is_a_dangling_link_alone(
    tmp_path: Path,
) -> None:
    """The store's path is a link to a place not there now (a mount not mounted yet): the
    command fails, and the link — the person's, not made by the command — stays."""
    link = tmp_path / "store.db"
    link.symlink_to(tmp_path / "unmounted" / "store.db")
    env = {"AKGENTIC_STORAGE": sqlite_url(link), "AKGENTIC_MODEL": None}
    result = CliRunner().invoke(app, ["catalog", "enable", "planning"], env=env)
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: cannot open storage")
    assert link.is_symlink()


def test_a_store_another_process_wrote_to_meanwhile_is_not_removed(tmp_path: Path) -> None:
    """A refused command removes the store it made only while it holds nothing: one that
    another process created and wrote to meanwhile stays whole."""
    url = sqlite_url(tmp_path / "store.db")
    with pytest.raises(RuntimeError, match="this command failed"), unmade_on_failure(url):
        theirs = open_storage(url)  # as another process would, in the same moment
        theirs.teams.create("theirs")
        theirs.close()
        raise RuntimeError("this command failed")
    kept = open_storage(url)
    assert [t.name for t in kept.teams.list()] == ["theirs"]
    kept.close()
