"""``python -m akgentic.cli``: the same command as the ``akgentic`` console script."""

from akgentic.cli.entry import main

if __name__ == "__main__":
    main()
