"""Home, state root, workspace root, store directories, slugs and the one safe-join (S1, S2)."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

from .errors import InvalidName, PathEscape

SLUG_MAX_BYTES = 255
SLUG_KEEP_BYTES = 238
NAME_SLUG_MAX_BYTES = 252

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3


def fnv1a_64(data: bytes) -> int:
    """FNV-1a 64-bit hash of ``data``."""
    h = _FNV64_OFFSET
    for byte in data:
        h ^= byte
        h = (h * _FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def _cut_to_bytes(text: str, limit: int) -> str:
    """Longest prefix of ``text`` whose UTF-8 encoding fits ``limit`` bytes."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", errors="ignore")


def bound_slug(slug: str, limit: int = SLUG_MAX_BYTES) -> str:
    """Bound a slug to ``limit`` bytes: first 238 bytes + ``-`` + FNV-1a-64 hex (S2.1)."""
    if len(slug.encode("utf-8")) <= limit:
        return slug
    keep = limit - 17
    return f"{_cut_to_bytes(slug, keep)}-{fnv1a_64(slug.encode('utf-8')):016x}"


def workspace_slug(root: Path | str, *, windows: bool | None = None) -> str:
    """Workspace slug of an absolute root path (S2.1)."""
    text = str(root)
    is_windows = (os.name == "nt") if windows is None else windows
    if is_windows:
        text = text.lower()
    slug = re.sub(r"[/\\:]", "-", text)
    return bound_slug(slug)


# Any run of characters that are neither letters nor digits (``_`` included: ``\w`` counts it
# as a word character, so ``[^\w]+|_+`` left ``"0_-0"`` as ``0--0``, which slugs again to ``0-0``).
_NON_ALNUM = re.compile(r"(?:[^\w]|_)+", re.UNICODE)
_PLAIN_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # slugify leaves such names as they are


def _lower(text: str) -> str:
    """Lowercase character by character, as Go's ``unicode.ToLower`` does (no special casing).

    ``str.lower`` maps ``İ`` to ``i`` + a combining dot (which would become ``-``) and a final
    ``Σ`` to ``ς``; Reasonix maps them to ``i`` and ``σ``.
    """
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := ch.lower()) == 1 else low[0] for ch in text)


def slugify(name: str) -> str:
    """Fact-name slug (S3.7): letters and digits of every script survive, runs become ``-``."""
    if len(name) <= NAME_SLUG_MAX_BYTES and _PLAIN_SLUG.fullmatch(name):
        return name  # already a slug (the common case, e.g. a listed fact's name): unchanged
    lowered = _lower(name.strip())
    slug = _NON_ALNUM.sub("-", lowered).strip("-")
    if not slug:
        raise InvalidName("memory name needs at least one letter or digit")
    if len(slug.encode("utf-8")) <= NAME_SLUG_MAX_BYTES:
        return slug
    # Bounded as in S2.1, except that a cut ending in ``-`` loses it, as Reasonix trims it:
    # ``aaa-`` + ``-<hash>`` would read back as another name (a slug has no ``--``).
    keep = _cut_to_bytes(slug, NAME_SLUG_MAX_BYTES - 17).rstrip("-")
    return f"{keep}-{fnv1a_64(slug.encode('utf-8')):016x}"


def reasonix_home(env: dict[str, str] | None = None) -> Path:
    """The Reasonix home: ``$REASONIX_HOME``, else ``~/.reasonix`` (``%APPDATA%\\reasonix``)."""
    env = dict(os.environ) if env is None else env
    value = env.get("REASONIX_HOME", "").strip()
    if value:
        return Path(os.path.expandvars(value)).expanduser().resolve()
    if sys.platform == "win32":
        appdata = env.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(appdata) / "reasonix"
    return Path.home() / ".reasonix"


def state_root(home: Path, env: dict[str, str] | None = None, *, explicit: bool = False) -> Path:
    """The state root: ``$REASONIX_STATE_HOME`` unless ``--home`` was given, else the home."""
    env = dict(os.environ) if env is None else env
    if not explicit:
        value = env.get("REASONIX_STATE_HOME", "").strip()
        if value:
            return Path(os.path.expandvars(value)).expanduser().resolve()
    return home


def find_workspace_root(workspace: Path) -> Path:
    """Nearest ancestor of ``workspace`` (itself included) holding ``.git``, else itself."""
    start = workspace.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


class EnginePaths:
    """Every directory the engine uses for one workspace and home (immutable, by value).

    Written out rather than a frozen dataclass: ``dataclasses`` (and ``inspect``, ``ast`` …)
    cost a hook relay process, which needs nothing else of them, ~20 ms here (issue 14).
    """

    __slots__ = ("_project_dir", "home", "root", "state", "workspace")
    __match_args__ = ("home", "state", "workspace", "root")

    home: Path
    state: Path
    workspace: Path
    root: Path
    _project_dir: Path

    def __init__(self, home: Path, state: Path, workspace: Path, root: Path) -> None:
        set_field = object.__setattr__
        set_field(self, "home", home)
        set_field(self, "state", state)
        set_field(self, "workspace", workspace)
        set_field(self, "root", root)

    def _fields(self) -> tuple[Path, Path, Path, Path]:
        return (self.home, self.state, self.workspace, self.root)

    def __repr__(self) -> str:
        return (
            f"EnginePaths(home={self.home!r}, state={self.state!r}, "
            f"workspace={self.workspace!r}, root={self.root!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EnginePaths):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[EnginePaths], tuple[Path, Path, Path, Path]]:
        return (EnginePaths, self._fields())

    @classmethod
    def resolve(
        cls,
        *,
        home: Path | str | None = None,
        workspace: Path | str | None = None,
        root: Path | str | None = None,
        env: dict[str, str] | None = None,
    ) -> EnginePaths:
        """Resolve paths from ``--home``/``--workspace`` and the environment (S1)."""
        if home is not None:
            home_path = Path(home).expanduser().resolve()
            state = home_path
        else:
            home_path = reasonix_home(env)
            state = state_root(home_path, env)
        ws = Path(workspace if workspace is not None else Path.cwd()).expanduser().resolve()
        ws_root = Path(root).expanduser().resolve() if root is not None else find_workspace_root(ws)
        return cls(home=home_path, state=state, workspace=ws, root=ws_root)

    @property
    def slug(self) -> str:
        """The workspace slug of the root."""
        return workspace_slug(self.root)

    @property
    def project_dir(self) -> Path:
        """``<state>/projects/<slug>``."""
        try:
            return self._project_dir
        except AttributeError:  # made once: a write asks for it about ten times
            found = self.state / "projects" / self.slug
            object.__setattr__(self, "_project_dir", found)
            return found

    @property
    def project_store(self) -> Path:
        """The project store directory (S2.1)."""
        return self.project_dir / "memory"

    @property
    def global_store(self) -> Path:
        """The global store directory (S2.2)."""
        return self.state / "memory" / "global"

    @property
    def sessions_dir(self) -> Path:
        """Reasonix sessions of this workspace."""
        return self.project_dir / "sessions"

    @property
    def workspace_data(self) -> Path:
        """Our own per-workspace files (traces, caches): never inside a store (S2.4)."""
        return self.project_dir / "context-center"

    @property
    def global_data(self) -> Path:
        """Our own global files (settings, caches) (S2.4)."""
        return self.state / "context-center"

    def store_dir(self, scope: str) -> Path:
        """The store directory for ``scope`` (``project`` or ``global``)."""
        return self.global_store if scope == "global" else self.project_store


def safe_join(root: Path, relative: str) -> Path:
    """Join ``relative`` under ``root``; reject absolute paths, ``..``, NUL and escapes (S2.5)."""
    if "\x00" in relative:
        raise PathEscape(f"memory path escapes store: {relative!r}")
    pure = relative.replace("\\", "/")
    if (
        not pure
        or pure.startswith("/")
        or re.match(r"^[A-Za-z]:", pure)
        or any(part == ".." for part in pure.split("/"))
    ):
        raise PathEscape(f"memory path escapes store: {relative}")
    joined = root / pure
    if "/" not in pure:
        # One name (a fact file, the common case): it escapes only through a symlink, so a
        # name that is not one needs no walk of the root's every component (two realpaths
        # cost ~14 lstat per fact path).
        try:
            if not stat.S_ISLNK(os.lstat(joined).st_mode):
                return joined
        except FileNotFoundError:
            return joined
        except OSError:
            pass  # cannot tell (a permission, a loop): the full check below decides
    root_real = os.path.realpath(root)
    joined_real = os.path.realpath(joined)
    if joined_real != root_real and not joined_real.startswith(root_real.rstrip(os.sep) + os.sep):
        raise PathEscape(f"memory path escapes store: {relative}")
    return joined


_HOME_PATTERNS = (
    re.compile(r"/home/[^/\s\"'<>]+"),
    re.compile(r"/Users/[^/\s\"'<>]+"),
    re.compile(r"[A-Za-z]:\\Documents and Settings\\[^\\\s\"'<>]+"),
    re.compile(r"[A-Za-z]:\\Users\\[^\\\s\"'<>]+"),
)
_HOME_MARKS = ("/home/", "/Users/", ":\\Documents and Settings\\", ":\\Users\\")


def redact_home(text: str) -> str:
    """Replace home-directory prefixes with ``<local-home>`` (S7.4)."""
    # Every pattern starts with one of these literals: text holding none is returned as is
    # (most snippets), without running the four regexes over it.
    if not any(mark in text for mark in _HOME_MARKS):
        return text
    for pattern in _HOME_PATTERNS:
        text = pattern.sub("<local-home>", text)
    return text
