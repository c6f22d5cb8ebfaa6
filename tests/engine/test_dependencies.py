"""Every third-party module the product imports is a declared runtime dependency, and back.

A plain ``pip install .`` must run the app and the CLI: a package that only the test extras
bring in (as numpy once came with rank-bm25) is a broken product.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = (ROOT / "app", ROOT / "ui")
OWN = {"context_engine", "context_center"}


def declared_distributions() -> set[str]:
    """Normalized distribution names of ``[project].dependencies``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[ <>=!;\[~]", dep, maxsplit=1)[0] for dep in project["dependencies"]}
    return {normalize(name) for name in names}


def normalize(name: str) -> str:
    """PEP 503 normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_top_levels() -> dict[str, Path]:
    """Top-level module names imported anywhere under app/ and ui/ (absolute imports only)."""
    found: dict[str, Path] = {}
    for source_root in SOURCE_ROOTS:
        for path in source_root.rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], path)
    return found


def third_party(found: dict[str, Path]) -> dict[str, Path]:
    """The imported names that are neither the standard library nor our own packages."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    return {name: path for name, path in found.items() if name not in stdlib | OWN}


@pytest.mark.slow
def test_every_third_party_import_is_declared() -> None:
    dists = packages_distributions()
    declared = declared_distributions()
    missing = {}
    for name, path in third_party(imported_top_levels()).items():
        providers = {normalize(d) for d in dists.get(name, [])}
        if not providers & declared:
            missing[name] = str(path.relative_to(ROOT))
    assert not missing, f"imported but not in [project].dependencies: {missing}"


@pytest.mark.slow
def test_every_declared_dependency_is_imported() -> None:
    dists = packages_distributions()
    used = {
        normalize(dist)
        for name in third_party(imported_top_levels())
        for dist in dists.get(name, [])
    }
    unused = declared_distributions() - used
    assert not unused, f"declared but imported nowhere in app/ or ui/: {sorted(unused)}"
