"""Read, change and restore one settings file: JSON or TOML, with a backup beside it (S15.1).

Install keeps the file's original bytes in ``<file>.context-engine-backup`` (or, when there was
no file, an empty ``<file>.context-engine-absent``) the first time it changes it. Uninstall takes
our entries out again and, when what is left equals the original, writes the original bytes
back, so the file is byte-identical; otherwise (the person changed something since) it keeps
their changes and only our entries go. A file that does not parse is never rewritten.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ContextEngineError

BACKUP_SUFFIX = ".context-engine-backup"
ABSENT_SUFFIX = ".context-engine-absent"
FOLDER_MADE = b"folder made by install\n"


class SettingsFileError(ContextEngineError):
    """A settings file we must change cannot be read unambiguously."""

    code = "format_error"


@dataclass
class Loaded:
    """One settings file: its bytes (``None``: missing) and parsed document."""

    path: Path
    original: bytes | None
    doc: Any  # dict for JSON, tomlkit document for TOML

    @property
    def is_toml(self) -> bool:
        """``config.toml`` (Codex)."""
        return self.path.suffix == ".toml"

    def plain(self) -> dict[str, Any]:
        """The document as plain Python values (for comparisons)."""
        if self.is_toml:
            unwrapped: dict[str, Any] = self.doc.unwrap()
            return unwrapped
        return dict(self.doc)

    def render(self) -> bytes:
        """The document as the file's new bytes, in the file's own style."""
        if self.is_toml:
            import tomlkit

            return tomlkit.dumps(self.doc).encode("utf-8")
        indent = _indent(self.original)
        text = json.dumps(self.doc, indent=indent, ensure_ascii=False)
        if self.original is None or self.original.endswith(b"\n"):
            text += "\n"
        return text.encode("utf-8")


def load(path: Path) -> Loaded:
    """Parse ``path`` (missing: an empty document); raises on anything ambiguous."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    return Loaded(path, data, parse(path, data))


def parse(path: Path, data: bytes | None) -> Any:
    """The document in ``data`` (``None``: empty)."""
    is_toml = path.suffix == ".toml"
    text = "" if data is None else data.decode("utf-8", errors="strict")
    try:
        if is_toml:
            import tomlkit

            return tomlkit.parse(text)
        if not text.strip():
            return {}
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "TOML" if is_toml else "JSON"
        raise SettingsFileError(f"{path} is not valid {kind}: {exc}") from exc
    except Exception as exc:  # tomlkit's own parse errors
        raise SettingsFileError(f"{path} is not valid TOML: {exc}") from exc
    if not isinstance(doc, dict):
        raise SettingsFileError(f"{path} does not hold a JSON object")
    return doc


def _indent(original: bytes | None) -> int | str:
    if original:
        found = re.search(rb"\n([ \t]+)\S", original)
        if found:
            whitespace = found.group(1).decode()
            return whitespace if "\t" in whitespace else len(whitespace)
    return 2


def backup_path(path: Path) -> Path:
    """Where the original bytes are kept while we are installed."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def absent_path(path: Path) -> Path:
    """The marker that there was no file before we installed."""
    return path.with_name(path.name + ABSENT_SUFFIX)


def original_doc(path: Path) -> tuple[Any, bytes | None, bool]:
    """``(document, bytes, known)`` of the file before the first install."""
    if absent_path(path).exists():
        return parse(path, None), None, True
    try:
        data = backup_path(path).read_bytes()
    except FileNotFoundError:
        return None, None, False
    return parse(path, data), data, True


def write(loaded: Loaded, dry_run: bool = False) -> bool:
    """Save ``loaded`` (keeping the original once); False when nothing would change."""
    new = loaded.render()
    if new == loaded.original:
        return False
    if dry_run:
        return True
    made_folder = not loaded.path.parent.exists()
    loaded.path.parent.mkdir(parents=True, exist_ok=True)
    if not backup_path(loaded.path).exists() and not absent_path(loaded.path).exists():
        if loaded.original is None:
            _atomic(absent_path(loaded.path), FOLDER_MADE if made_folder else b"", 0o600)
        else:
            _atomic(backup_path(loaded.path), loaded.original, 0o600)
    _atomic(loaded.path, new, _mode(loaded.path))
    return True


def restore(loaded: Loaded) -> str:
    """After our entries were taken out: the original bytes if nothing else changed.

    Returns what happened (``restored``, ``removed``, ``kept changes``, ``unchanged``).
    """
    before, data, known = original_doc(loaded.path)
    outcome = "unchanged"
    if known and _same(before, loaded):
        if data is None:
            loaded.path.unlink(missing_ok=True)
            outcome = "removed"
        else:
            if loaded.original != data:
                _atomic(loaded.path, data, _mode(loaded.path))
            outcome = "restored"
    elif loaded.render() != loaded.original:
        _atomic(loaded.path, loaded.render(), _mode(loaded.path))
        outcome = "kept changes"
    backup_path(loaded.path).unlink(missing_ok=True)
    absent_path(loaded.path).unlink(missing_ok=True)
    return outcome


def folder_made(path: Path) -> bool:
    """True when install created ``path``'s folder (uninstall removes it again if empty)."""
    try:
        return absent_path(path).read_bytes() == FOLDER_MADE
    except OSError:
        return False


def _same(before: Any, loaded: Loaded) -> bool:
    plain = before.unwrap() if hasattr(before, "unwrap") else before
    return bool(plain == loaded.plain())


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o600  # settings may name local paths: private by default


def _atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
