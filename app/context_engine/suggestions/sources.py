"""Read-only loaders for what candidates are deduplicated against: facts and instructions."""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import ContextEngineError
from ..facts.model import Fact
from ..paths import EnginePaths
from .model import ScanDiagnostic


def _module(name: str, diagnostics: list[ScanDiagnostic], paths: EnginePaths) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        diagnostics.append(ScanDiagnostic("dedupe_source_missing", paths.root, str(exc)))
        return None


def load_facts(paths: EnginePaths, diagnostics: list[ScanDiagnostic]) -> list[Fact]:
    """Active facts of both stores, read through the catalog without migrating or writing."""
    module = _module("context_engine.catalog.local", diagnostics, paths)
    if module is None:
        return []
    try:
        snapshot = module.LocalCatalog(paths).list_facts()
    except (ContextEngineError, OSError) as exc:
        diagnostics.append(ScanDiagnostic("facts_unreadable", paths.project_store, str(exc)))
        return []
    return [f for f in snapshot.facts if isinstance(f, Fact)]


def load_instruction_bodies(paths: EnginePaths, diagnostics: list[ScanDiagnostic]) -> list[str]:
    """Bodies of the instruction documents the workspace loads."""
    module = _module("context_engine.instructions", diagnostics, paths)
    if module is None:
        return []
    try:
        resolution = module.resolve_instructions(paths)
    except (ContextEngineError, OSError) as exc:
        diagnostics.append(ScanDiagnostic("instructions_unreadable", paths.root, str(exc)))
        return []
    return [str(doc.body) for doc in resolution.documents]
