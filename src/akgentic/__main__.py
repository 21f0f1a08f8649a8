"""``python -m akgentic``: the ``akgentic`` command, as ``python -m akgentic.cli`` is.

The package's own name is what a person tries first when the console script is not on
``PATH`` (a venv not activated); it must not answer "cannot be directly executed".
"""

from akgentic.cli.entry import main

if __name__ == "__main__":
    main()
