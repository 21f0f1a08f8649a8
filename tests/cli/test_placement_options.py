"""``akgentic serve --placement``: a wrong choice is one ``error:`` line saying what to do,
before anything starts. (Serving on a real Ray cluster: tests/team/placement.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from akgentic.cli import app
from akgentic.cli.errors import CliError
from akgentic.cli.placement import placement_of

HAS_RAY = importlib.util.find_spec("ray") is not None
NOWHERE = "postgresql://nobody@127.0.0.1:1/none"  # never connected to by these tests


def serve(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["serve", *args], env={"AKGENTIC_SERVER": None})
    return result.exit_code, result.stderr


def test_a_placement_is_local_or_ray(tmp_path: Path) -> None:
    code, err = serve("--placement", "moon", "--storage", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 1
    assert err.strip() == "error: --placement moon: choose local or ray"


def test_the_ray_options_need_the_ray_placement(tmp_path: Path) -> None:
    code, err = serve(
        "--ray-address", "10.0.0.1:6379", "--storage", f"sqlite:///{tmp_path / 'a.db'}"
    )
    assert code == 1
    assert "error: --ray-address, --team-cpus, --team-gpus, --team-resource and " in err
    assert "apply to --placement ray only" in err


@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]'")
def test_the_ray_placement_needs_a_store_every_worker_reaches(tmp_path: Path) -> None:
    code, err = serve("--placement", "ray", "--storage", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 1
    assert err.startswith(
        "error: --placement ray needs a store every worker reaches: --storage postgresql://"
    )


@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]'")
def test_team_resources_are_names_and_amounts() -> None:
    with pytest.raises(CliError, match="--team-resource gpu=lots: write NAME=AMOUNT"):
        placement_of("ray", NOWHERE, resources=["gpu=lots"])
    with pytest.raises(
        CliError, match="^invalid --team-resource: a custom resource needs a name and an amount"
    ):
        placement_of("ray", NOWHERE, resources=["=1"])
    assert placement_of("local", NOWHERE) is None


@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]'")
def test_the_imported_modules_go_to_every_teams_actor(monkeypatch: pytest.MonkeyPatch) -> None:
    import akgentic.team.placement.ray as ray_placement

    made: list[object] = []

    def placement(url: str, options: object) -> object:
        made.append(options)
        return options

    monkeypatch.setattr(ray_placement, "RayPlacement", placement)
    placement_of("ray", NOWHERE, imports=["json", "csv"])
    [options] = made
    assert isinstance(options, ray_placement.RayOptions)
    assert options.imports == ("json", "csv")


def test_serve_hands_its_imports_to_the_placement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import akgentic.cli.serve as serve_command

    asked: dict[str, object] = {}

    def placement(kind: str, url: str, **options: object) -> None:
        asked.update(options, kind=kind)
        raise CliError("placed")  # nothing is served

    monkeypatch.setattr(serve_command, "placement_of", placement)
    code, err = serve(
        "--placement",
        "ray",
        "--import",
        "json",
        "--import",
        "csv",
        "--port",
        "0",
        "--storage",
        f"sqlite:///{tmp_path / 'a.db'}",
    )
    assert (code, err.strip()) == (1, "error: placed")
    assert asked["kind"] == "ray"
    assert asked["imports"] == ["json", "csv"]
