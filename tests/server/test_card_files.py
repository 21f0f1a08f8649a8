"""The cards ``akgentic serve --cards`` loads: a folder's card that cannot be read is
skipped with a line naming it and why, and the folder's other cards are served; a card
file named itself, or a path that is not there, is an error (the operator asked for it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.server import CardRegistry
from akgentic.team import TeamCardError
from tests.hostile_yaml import alias_bomb

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
