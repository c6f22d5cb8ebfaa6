"""House rules over the source tree, read as text and syntax trees (qutebrowser misc_checks style).

* layering: the engine never imports Qt or the app; widgets hold no business rules;
* one door: the store is constructed only in the catalog (and the store package itself), and
  an import-graph walk finds no module outside them that imports or calls the store's writes;
* no blocking ``exec()`` in widgets, dialogs and presenters (they use ``.open()`` and a callback);
* no module singletons: no module-level instance of a stateful service, no ``global``;
* every ``type: ignore`` names its error code, and in app/ and ui/ says why.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from support import APP_DIR, ROOT, UI_DIR

# The store and its write path. Only these packages may construct or write it.
STORE_PACKAGE = "context_engine.facts"
DOOR_PACKAGE = "context_engine.catalog"
STORE_CLASSES = {"Memory", "Store", "Stores"}
WRITE_MODULES = {  # module → the names in it that write a store
    "context_engine.facts.saving": {"save", "restore", "refresh_indexes"},
    "context_engine.facts.recovery": {"forget", "recover"},
    "context_engine.facts.migration": {"migrate_store"},
    "context_engine.facts.memory": {"Memory"},
}
WRITE_METHODS = {"save", "forget", "restore", "recover", "migrate", "rebuild_indexes"}
# Calls with these names whose receiver is not a store (checked by hand, named here).
NOT_A_STORE = re.compile(r"^(states|SparseIndex|PoolTracker|self\._?states)\b")
STATEFUL = {
    "Memory", "Store", "LocalCatalog", "RemoteCatalog", "ContextEngine", "RecallService",
    "Recaller", "TaskManager", "Hub", "FileWatcher", "QApplication", "QSettings",
    "ThreadPoolExecutor", "RpcClient", "Server",
}  # fmt: skip
# ``global`` rebinding that is allowed, with the reason.
GLOBAL_OK = {
    "context_center.render.markdown": "the highlighting style follows the palette; set on the "
    "GUI thread by theme.apply, read by renderers",
}


@dataclass(frozen=True)
class Module:
    """One source module: its dotted name, path, text and syntax tree."""

    name: str
    path: Path
    text: str
    tree: ast.Module

    def within(self, package: str) -> bool:
        """Whether this module is ``package`` or inside it."""
        return self.name == package or self.name.startswith(package + ".")


@cache
def modules() -> tuple[Module, ...]:
    """Every module of both packages."""
    found = []
    for base in (APP_DIR, UI_DIR):
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            text = path.read_text(encoding="utf-8")
            found.append(Module(name, path, text, ast.parse(text)))
    assert len(found) > 100
    return tuple(found)


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if module.path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the statements under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                ids.update(id(n) for n in ast.walk(child))
    return ids


def imports(module: Module) -> Iterator[tuple[str, str, int]]:
    """(module imported, name or "", line) for every import that runs (not TYPE_CHECKING)."""
    skipped = _type_checking_nodes(module.tree)
    for node in ast.walk(module.tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            for alias in node.names:
                yield source, alias.name, node.lineno
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            yield str(node.args[0].value), "", node.lineno


def _where(module: Module, line: int) -> str:
    return f"{module.path.relative_to(ROOT)}:{line}"


# -- layering ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_engine_never_imports_qt_or_the_app() -> None:
    bad = [
        f"{_where(m, line)} imports {name}"
        for m in modules()
        if m.within("context_engine")
        for name, _, line in imports(m)
        if name.split(".")[0] in ("PySide6", "shiboken6", "context_center")
    ]
    assert bad == []


@pytest.mark.slow
def test_widgets_hold_no_business_rules() -> None:
    """Widgets draw; they never reach the catalog, the store, the policy or the tools."""
    rules = ("context_engine.catalog", "context_engine.facts.memory", "context_engine.policy",
             "context_engine.tools", "context_engine.engine")  # fmt: skip
    bad = [
        f"{_where(m, line)} imports {name}"
        for m in modules()
        if m.within("context_center.widgets")
        for name, _, line in imports(m)
        if name.startswith(rules)
    ]
    assert bad == []


# -- one door ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_store_is_constructed_only_in_the_catalog() -> None:
    bad = []
    for m in modules():
        if m.within(STORE_PACKAGE) or m.within(DOOR_PACKAGE):
            continue
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Call):
                callee = ast.unparse(node.func).split(".")
                if callee[-1] in STORE_CLASSES or callee[-2:] == ["Memory", "open"]:
                    bad.append(f"{_where(m, node.lineno)}: {ast.unparse(node.func)}(")
    assert bad == []


@pytest.mark.slow
def test_import_graph_nothing_outside_the_catalog_reaches_the_store_writes() -> None:
    """Walk every module's imports and calls: the store's write path is the catalog's alone."""
    graph = {m.name: list(imports(m)) for m in modules()}
    assert "context_engine.catalog.door" in graph and "context_engine.facts.saving" in graph
    bad = []
    for m in modules():
        if m.within(STORE_PACKAGE) or m.within(DOOR_PACKAGE):
            continue
        for source, name, line in graph[m.name]:
            writers = WRITE_MODULES.get(source, set())
            if name in writers or (source in WRITE_MODULES and name in ("", "*")):
                bad.append(f"{_where(m, line)} imports {source}.{name or '*'}")
        for node in ast.walk(m.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver = ast.unparse(node.func.value)
            if (
                node.func.attr in WRITE_METHODS
                and not NOT_A_STORE.match(receiver)
                and re.search(r"memory|store", receiver, re.IGNORECASE)
            ):
                bad.append(f"{_where(m, node.lineno)} calls {receiver}.{node.func.attr}()")
    assert bad == []
    # And the door really is the way in: the CLI, the app, hooks, MCP and serve reach it.
    reach = {name for name, edges in graph.items() for source, _, _ in edges
             if source.startswith(DOOR_PACKAGE)}  # fmt: skip
    for surface in ("context_engine.cli.facts_cmds", "context_engine.tools.write",
                    "context_engine.remote.server", "context_center.services.backend"):  # fmt: skip
        assert surface in reach, surface


# -- Qt habits and module state ------------------------------------------------------------------


def test_no_blocking_exec_in_widgets_dialogs_or_presenters() -> None:
    """Widgets, dialogs and presenters open with ``.open()`` and a callback (practice 5)."""
    bad = [
        f"{_where(m, node.lineno)}: {ast.unparse(node)}"
        for m in modules()
        if any(m.within(f"context_center.{part}") for part in ("widgets", "dialogs", "presenters"))
        for node in ast.walk(m.tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("exec", "exec_")
    ]
    assert bad == []


@pytest.mark.slow
def test_no_module_singletons() -> None:
    bad = []
    for m in modules():
        for node in m.tree.body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if isinstance(value, ast.Call):
                callee = ast.unparse(value.func).split(".")[-1]
                if callee in STATEFUL:
                    bad.append(f"{_where(m, node.lineno)}: module-level {callee}()")
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Global) and m.name not in GLOBAL_OK:
                bad.append(f"{_where(m, node.lineno)}: global {', '.join(node.names)}")
    assert bad == []


# -- type: ignore --------------------------------------------------------------------------------

_IGNORE = re.compile(r"#\s*type:\s*ignore(?P<code>\[[a-z-]+(?:,\s*[a-z-]+)*\])?(?P<rest>.*)$")


def test_every_type_ignore_names_its_code_and_in_the_source_says_why() -> None:
    bad = []
    for base in (APP_DIR, UI_DIR, ROOT / "tests", ROOT / "bench"):
        for path in sorted(base.rglob("*.py")):
            source = base in (APP_DIR, UI_DIR)
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found = _IGNORE.search(line)
                if found is None:
                    continue
                where = f"{path.relative_to(ROOT)}:{number}"
                if found["code"] is None:
                    bad.append(f"{where}: blanket type: ignore")
                elif source and "reason:" not in found["rest"]:
                    bad.append(f"{where}: type: ignore{found['code']} without '# reason: …'")
    assert bad == []
