"""dev.py: the installer shows progress as pip works (real pip, offline, on wheels made
here), and shows pip's own output when it fails."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("akgentic_dev_script", REPO / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_wheel(folder: Path, name: str, requires: tuple[str, ...] = ()) -> Path:
    """A real (tiny) wheel: a module and its dist-info."""
    wheel = folder / f"{name}-0.1-py3-none-any.whl"
    info = f"{name}-0.1.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    files = {
        f"{name}/__init__.py": "VALUE = 1\n",
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", record)
    return wheel


def test_pip_install_shows_each_step_as_it_goes(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "akg_dep_a")
    make_wheel(wheels, "akg_dep_b")
    top = make_wheel(wheels, "akg_top", ("akg_dep_a", "akg_dep_b"))
    out = io.StringIO()

    code = dev_module().pip_install(
        Path(sys.executable),
        ["--no-index", "--find-links", str(wheels), "--target", str(tmp_path / "t"), str(top)],
        out,
    )

    assert code == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    collecting = [line for line in lines if line.startswith("  collecting ")]
    assert collecting and collecting[0].startswith("  collecting ") and "akg_top" in collecting[0]
    assert any(line.startswith("  installing 3 package(s) (3 packages so far") for line in lines), (
        lines
    )
    assert lines[-1].startswith("  done in ") and lines[-1].endswith("(3 packages)")
    assert (tmp_path / "t" / "akg_top" / "__init__.py").is_file()


class _FakePip:
    """What ``subprocess.Popen`` gives for pip: its lines, then exit code 0."""

    def __init__(self, lines: list[str]) -> None:
        self.stdout = iter(lines)

    def wait(self) -> int:
        return 0


def test_a_log_gets_a_line_per_step_and_every_20_packages_not_one_per_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pip alternates Collecting and Downloading for each of 45 packages: a log (not a
    terminal) gets a line when each step first comes and one every 20 packages."""
    pip = [f"{line}\n" for n in range(45) for line in (f"Collecting p{n}", f"Downloading p{n}.whl")]
    pip.append("Installing collected packages: " + ", ".join(f"p{n}" for n in range(45)) + "\n")
    dev = dev_module()
    monkeypatch.setattr(dev.subprocess, "Popen", lambda *a, **k: _FakePip(pip))
    out = io.StringIO()

    assert dev.pip_install(Path(sys.executable), ["anything"], out) == 0

    steps = [line.split()[:2] for line in out.getvalue().splitlines()]
    assert steps == [
        ["collecting", "p0"],
        ["downloading", "p0.whl"],
        ["collecting", "p19"],
        ["collecting", "p39"],
        ["installing", "45"],
        ["done", "in"],
    ]


def test_an_install_with_nothing_new_still_shows_its_steps() -> None:
    """What dev.py sees after pyproject.toml changed: everything already there (pytest and
    its requirements are installed here; --no-index and --dry-run: nothing is fetched)."""
    out = io.StringIO()
    code = dev_module().pip_install(
        Path(sys.executable), ["--no-index", "--dry-run", "pytest"], out
    )
    assert code == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("  checking pytest (1 packages so far, "), lines
    checked = int(lines[-1].rsplit("(", 1)[1].split()[0])
    assert checked >= 4  # pytest, pluggy, iniconfig, packaging...
    assert lines[-1].startswith("  done in ")


def test_a_failing_install_shows_what_pip_said(tmp_path: Path) -> None:
    out = io.StringIO()

    code = dev_module().pip_install(
        Path(sys.executable), ["--no-index", str(tmp_path / "missing")], out
    )

    assert code != 0
    text = out.getvalue()
    assert "missing" in text  # pip's own words, naming the requirement
    assert text.splitlines()[-1].startswith(f"pip failed (exit code {code})")


def test_a_test_run_ends_with_why_tests_were_skipped(tmp_path: Path) -> None:
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        "NEEDS_PG = pytest.mark.skipif(True, reason='set PG_URL to run the Postgres tests')\n"
        "@NEEDS_PG\n"
        "def test_a(): pass\n"
        "@NEEDS_PG\n"
        "def test_b(): pass\n"
        "def test_c(): pytest.skip('no chromium: apt-get install chromium')\n"
        "def test_d(): pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.skip_summary", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "why 3 tests were skipped" in line)
    assert lines[start + 1 : start + 3] == [
        "    2  set PG_URL to run the Postgres tests",
        "    1  no chromium: apt-get install chromium",
    ]
