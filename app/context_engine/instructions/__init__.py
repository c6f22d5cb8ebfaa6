"""Standing instructions (S6): discovery, imports, resolution, provider block, quick add."""

from .model import (
    ImportRecord,
    InstructionDiagnostic,
    InstructionDocument,
    Resolution,
)
from .opener import FileSystem
from .quick_add import EmptyNote, parse_quick_add, quick_add, root_document
from .render import render_provider_block
from .report import format_report
from .resolver import resolve_instructions
from .watch import changed_labels, changed_paths, path_label

__all__ = [
    "EmptyNote",
    "FileSystem",
    "ImportRecord",
    "InstructionDiagnostic",
    "InstructionDocument",
    "Resolution",
    "changed_labels",
    "changed_paths",
    "format_report",
    "parse_quick_add",
    "path_label",
    "quick_add",
    "render_provider_block",
    "resolve_instructions",
    "root_document",
]
