"""freeze_import_heap(): once per process, and what is made afterwards stays collectable.

Each case runs in a child interpreter: a freeze is for the life of a process, and the test
run's own heap must stay collectable.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_child(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_first_call_freezes_what_is_alive_and_a_second_freezes_nothing() -> None:
    first, count, second, after = run_child(
        """
        import gc
        from akgentic.core import freeze_import_heap
        first = freeze_import_heap()
        count = gc.get_freeze_count()
        made_later = [[i] for i in range(1000)]
        second = freeze_import_heap()
        print(first, count, second, gc.get_freeze_count())
        """
    )
    assert int(first) > 10_000  # the imports: modules, classes, schemas
    assert int(count) >= int(first) - 10  # (a frozen object freed since leaves the count)
    assert int(second) == 0
    assert int(after) <= int(count)  # the 1,001 lists made later were not frozen


def test_a_cycle_made_after_the_freeze_is_still_collected() -> None:
    (alive,) = run_child(
        """
        import gc, weakref
        from akgentic.core import freeze_import_heap
        freeze_import_heap()

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a
        watch = weakref.ref(a)
        del a, b
        gc.collect()
        print(watch() is not None)
        """
    )
    assert alive == "False"


def test_the_console_script_freezes_the_heap_before_the_command_runs() -> None:
    # once the command's module is imported (akgentic.cli.lazy), before it parses its options
    (frozen,) = run_child(
        """
        import contextlib, gc, io, sys
        from akgentic.cli import entry
        sys.argv = ["akgentic", "teams", "list", "--help"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            entry.main()
        print(gc.get_freeze_count())
        """
    )
    assert int(frozen) > 10_000
