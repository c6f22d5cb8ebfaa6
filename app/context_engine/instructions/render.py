"""The provider-visible instruction block (S6.7): labels only, no paths, no diagnostics."""

from __future__ import annotations

from .model import InstructionDocument, Resolution

PREAMBLE = (
    "These standing instructions come from instruction files, listed from lowest to highest "
    "precedence: later entries are more specific and win when they conflict with earlier "
    "ones. The current user request is the highest-priority instruction of all."
)


def document_heading(doc: InstructionDocument) -> str:
    """``## <label> (<scope>[, applies to <dir label>])``."""
    if doc.scope == "user":
        return f"## {doc.label} (user)"
    return f"## {doc.label} ({doc.scope}, applies to {doc.dir_label})"


def render_provider_block(resolution: Resolution) -> str:
    """The ``# Instructions`` block, or ``""`` when no document applies.

    Built only from labels and bodies, so the same tree at two absolute locations gives the
    same bytes (S6.7, S7.4); diagnostics never enter it (S6.6).
    """
    if not resolution.documents:
        return ""
    parts = ["# Instructions", PREAMBLE]
    for doc in resolution.documents:
        parts.append(document_heading(doc))
        parts.append(doc.body.strip("\r\n"))
    return "\n\n".join(parts) + "\n"
