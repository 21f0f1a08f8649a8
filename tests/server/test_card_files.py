"""The cards ``akgentic serve --cards`` loads: a folder's card that cannot be read is
skipped with a line naming it and why, and the folder's other cards are served; a card
file named itself, or a path that is not there, is an error (the operator asked for it)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from akgentic.client import ServerError
from akgentic.server import CardRegistry, ServerSettings
from akgentic.team import TeamCardError
from tests.hostile_yaml import alias_bomb
from tests.server.conftest import serve_cards

TIDY = "name: tidy\nentry_point: '@A'\nmembers: [{card: {role: A, config: {name: '@A'}}}]\n"

HOSTILE = {
    "long.yaml": TIDY + "description: " + "1" * 5000 + "\n",
    "date.yaml": TIDY + "description: 2001-13-45\n",
    "nul.yaml": TIDY + "description: a\x00b\n",
    "bomb.yaml": TIDY + alias_bomb(),
    "deep.yaml": TIDY + "description: " + "[" * 5000 + "]" * 5000 + "\n",
    "import.yaml": TIDY + "imports: ['']\n",
}


def test_a_folders_card_that_cannot_be_read_is_skipped_naming_it_and_the_others_served(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "tidy.yaml").write_text(TIDY)
    for name, text in HOSTILE.items():
        (folder / name).write_text(text)
    (folder / "latin1.yaml").write_bytes(TIDY.encode() + "description: caf\xe9\n".encode("latin-1"))
    registry = CardRegistry()
    registry.load([folder])
    assert [card.name for card, _ in registry.items()] == ["tidy"]
    skipped = {line.split(": ", 2)[1].split(":")[0]: line for line in registry.problems}
    assert sorted(skipped) == sorted(str(folder / n) for n in [*HOSTILE, "latin1.yaml"])
    assert all(line.count("\n") == 0 for line in registry.problems)
    said = skipped[str(folder / "long.yaml")]
    assert said.startswith(f"card skipped: {folder / 'long.yaml'}:4: not valid YAML: an integer")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_card_file_named_itself_that_cannot_be_read_is_an_error(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name])
    registry = CardRegistry()
    with pytest.raises(TeamCardError) as refused:
        registry.load([path])
    assert str(refused.value).startswith(f"{path}")
    assert registry.items() == []


def test_a_path_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TeamCardError, match="no such file or folder"):
        CardRegistry().load([tmp_path / "nope.yaml"])


def test_a_client_asking_for_a_skipped_card_is_told_why_it_was_skipped(tmp_path: Path) -> None:
    """The skipped card's line reaches the client that names it (by its ``name:`` or its
    file's name), not just the server's console; a name no file had is still unknown."""
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "tidy.yaml").write_text(TIDY)
    (folder / "pp.yaml").write_text(
        "name: pingpong\nentry_point: '@A'\nmembers: [{card: {role: A, config: {name: '@A'}}}]\n"
        "max_agent_hops: lots\n"
    )
    registry = CardRegistry()
    registry.load([folder])
    [problem] = registry.problems
    reason = problem.removeprefix("card skipped: ")
    assert reason.startswith(f"{folder / 'pp.yaml'}:4: max_agent_hops")
    with closing(serve_cards(tmp_path, ServerSettings(port=0), registry)) as serving:
        served = next(serving)
        for name in ("pingpong", "pp"):
            with pytest.raises(ServerError) as refused:
                served.client.create_team(name)
            assert refused.value.status == 422
            assert refused.value.detail == (
                f"team card {name!r} was skipped when the server started: {reason}; fix the "
                f"file and restart the server"
            )
        with pytest.raises(ServerError) as unknown:
            served.client.create_team("nope")
        assert unknown.value.detail == "no team card named 'nope'; known cards: tidy"
        assert served.client.list_teams() == []
