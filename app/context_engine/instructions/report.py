"""Local views of a resolution (S6.6, S12): the JSON payload and the text report.

These show real paths and diagnostics; they are for people, never for the provider.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

from .model import INFO_CODES, InstructionDiagnostic, InstructionDocument, Resolution


def printable(text: str) -> str:
    """``text`` with control, format and other invisible characters shown as ``\\uXXXX``."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _where(source: Path | None, line: int | None) -> str:
    if source is None:
        return "-"
    return f"{source}:{line}" if line is not None else str(source)


def diagnostic_payload(diag: InstructionDiagnostic) -> dict[str, Any]:
    """``{code, source, line, path, message}`` (S12)."""
    return {
        "code": diag.code,
        "source": None if diag.source is None else str(diag.source),
        "line": diag.line,
        "path": diag.path,
        "message": diag.message,
    }


def document_payload(doc: InstructionDocument) -> dict[str, Any]:
    """``{order, scope, label, path, directory, imports: [{path, source, line}]}`` (S12)."""
    return {
        "order": doc.order,
        "scope": doc.scope,
        "label": doc.label,
        "path": str(doc.path),
        "directory": str(doc.directory),
        "imports": [
            {"path": str(item.path), "source": str(item.source), "line": item.line}
            for item in doc.imports
        ],
    }


def resolution_payload(resolution: Resolution) -> dict[str, Any]:
    """The ``instructions --json`` object (S12)."""
    return {
        "root": str(resolution.root),
        "documents": [document_payload(doc) for doc in resolution.documents],
        "diagnostics": [diagnostic_payload(diag) for diag in resolution.diagnostics],
    }


def format_report(resolution: Resolution) -> str:
    """The local text view: precedence, real paths, imports with their source, diagnostics."""
    lines = [f"Workspace root: {resolution.root}", f"Target: {resolution.target}"]
    if resolution.documents:
        lines.append("Documents, lowest to highest precedence (later entries win; the current")
        lines.append("user request is highest):")
        for doc in resolution.documents:
            applies = "" if doc.scope == "user" else f", applies to {doc.dir_label}"
            local = ", local" if doc.local else ""
            lines.append(f"  {doc.order}. {doc.label} ({doc.scope}{applies}{local})")
            lines.append(f"     path: {doc.path}")
            for item in doc.imports:
                lines.append(
                    f"     import: {printable(str(item.path))} (from {item.source}:{item.line})"
                )
    else:
        lines.append("No instruction files apply.")
    if resolution.diagnostics:
        lines.append("Diagnostics:")
        for diag in resolution.diagnostics:
            note = " (note)" if diag.code in INFO_CODES else ""
            lines.append(
                f"  {diag.code}{note} at {_where(diag.source, diag.line)}: "
                f"{printable(diag.path)}: {printable(diag.message)}"
            )
    else:
        lines.append("Diagnostics: none")
    return "\n".join(lines) + "\n"
