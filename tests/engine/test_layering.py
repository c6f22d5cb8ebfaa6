"""The engine never imports Qt (ARCHITECTURE practice 1)."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"


def _all_engine_modules() -> list[str]:
    import context_engine

    names = ["context_engine"]
    for info in pkgutil.walk_packages(context_engine.__path__, "context_engine."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


@pytest.mark.slow
def test_importing_every_engine_module_loads_no_qt() -> None:
    modules = _all_engine_modules()
    assert len(modules) > 3
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'PyQt5', 'PyQt6', 'shiboken6'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", script],
                         env={"PYTHONPATH": str(APP), "PATH": "/usr/bin:/bin"}, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_check_would_notice_qt() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import PySide6.QtCore, sys; print('PySide6' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"
