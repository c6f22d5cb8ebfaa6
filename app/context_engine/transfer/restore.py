"""``import bundle``: restore a bundle into empty stores, or merge it into non-empty ones.

An empty store (no facts, archive entries or snapshots) gets every file of its scope back
byte-identical, mtimes included, through the store's restore primitive
(``facts.placement.restore_stores``), all or nothing. A store that already holds memories is
merged, never overwritten:

* a bundle fact whose id and bytes are already here is the same (nothing to do);
* a fact new to this home comes in with its id and its whole revision history;
* a fact whose id is here with other content, or whose name is taken by another id, is a
  conflict: skipped, or (``on_conflict="revision"``, or that one path in ``revise``) its
  content saved as a new revision of the fact here through the door (expected revision
  checked, old bytes snapshotted);
* archive entries and snapshots come in where their file name is free; the same bytes are the
  same; other bytes are listed as conflicts and skipped. MEMORY.md is rebuilt, never replaced.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..catalog.local import LocalCatalog
from ..catalog.ops import Person, Surface
from ..errors import ContextEngineError, FactFormatError
from ..facts.codec import parse_fact
from ..facts.fs import FS
from ..facts.model import Fact, Scope, utc_now
from ..facts.placement import StagedFile, StoreRestore, restore_stores
from ..facts.store_files import is_empty_store
from ..filemodes import make_private_dirs
from ..paths import EnginePaths
from .bundle_format import DEFAULT_LIMITS, SCOPE_NAMES, Limits
from .bundle_read import Bundle, BundleFile, read_bundle
from .progress import ProgressFn, no_progress
from .writing import save_as_revision

OnConflict = Literal["skip", "revision"]
Mode = Literal["restore", "merge"]


@dataclass(frozen=True, slots=True)
class Conflict:
    """A bundle file that differs from what is here; kept out unless saved as a revision."""

    scope: str
    kind: str  # changed | name | archive | revision | unreadable
    path: str  # inside the store
    detail: str
    target: str = ""  # the reference of the fact here, for ``changed``/``name``
    resolution: str = "skipped"  # skipped | revision <n>


@dataclass(slots=True)
class ScopePlan:
    """What restoring one scope will do."""

    scope: str
    mode: Mode
    place: list[BundleFile] = field(default_factory=list)
    same: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    revise: list[tuple[Conflict, Fact, Fact]] = field(default_factory=list)  # bundle, here


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What ``import bundle`` did (or, dry, would do) per scope."""

    plans: tuple[ScopePlan, ...]
    placed: int
    revised: tuple[Fact, ...]
    written: bool


def describe(report: RestoreReport) -> list[str]:
    """One line per scope and per conflict, as the CLI and the app show a restore's plan."""
    lines = []
    verb = "" if report.written else "would "
    for p in report.plans:
        action = "restore" if p.mode == "restore" else "merge"
        lines.append(f"{p.scope} store: {verb}{action} {len(p.place)} files"
                     f" ({p.same} already here, {len(p.conflicts) + len(p.revise)} conflicts)")
        for c in p.conflicts + [r[0] for r in p.revise]:
            lines.append(f"  conflict {c.kind} {c.path}: {c.detail} — {c.resolution}")
    if not report.plans:
        lines.append("the bundle holds no files")
    return lines


def has_conflicts(report: RestoreReport) -> bool:
    """True when some fact here differs from the bundle's (a choice for the person)."""
    return any(p.revise or any(c.kind in ("changed", "name") for c in p.conflicts)
               for p in report.plans)


def _sha(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _same_content(a: Fact, b: Fact) -> bool:
    """Same memory whatever its revision and times (a merge already taken as a revision)."""
    return (a.name, a.title, a.description, a.type, a.body.strip()) == (
        b.name, b.title, b.description, b.type, b.body.strip())


def _parse(item: BundleFile, scope: str) -> Fact:
    assert item.data is not None
    scope_value: Scope = "global" if scope == "global" else "project"
    return parse_fact(item.data, path=Path(item.where.relative), store_scope=scope_value,
                      mtime=utc_now()).fact


def _plan_merge(plan: ScopePlan, bundle: Bundle, paths: EnginePaths, fs: FS,
                on_conflict: OnConflict, revise: Collection[str]) -> None:
    root = paths.store_dir(plan.scope)
    here = list(LocalCatalog(paths, fs=fs).list_facts().facts)
    by_id = {f.id: f for f in here}
    by_name = {f.name: f for f in here if f.scope == plan.scope}
    files = bundle.of_scope(plan.scope)
    held_back: set[str] = set()  # ids whose history stays out (their fact conflicts)
    for item in (f for f in files if f.where.kind == "fact"):
        try:
            fact = _parse(item, plan.scope)
        except FactFormatError as exc:
            plan.conflicts.append(Conflict(plan.scope, "unreadable", item.where.relative,
                                           exc.message))
            continue
        target = by_id.get(fact.id) or by_name.get(fact.name)
        if target is None:
            plan.place.append(item)
            continue
        if target.id != fact.id:
            held_back.add(fact.id)  # another identity's history never joins this one
        if _same_content(fact, target) or (
            target.path is not None and _sha(target.path) == item.sha256
        ):
            plan.same += 1
            continue
        held_back.add(fact.id)
        kind = "changed" if target.id == fact.id else "name"
        detail = ("differs from the fact here" if kind == "changed"
                  else f"name is used here by id {target.id}")
        conflict = Conflict(plan.scope, kind, item.where.relative, detail, target.reference)
        chosen = {f"{plan.scope}/{item.where.relative}", item.where.relative} & set(revise)
        if on_conflict == "revision" or chosen:
            plan.revise.append((conflict, fact, target))
        else:
            plan.conflicts.append(conflict)
    for item in (f for f in files if f.where.kind in ("archive", "revision")):
        if item.where.kind == "revision" and item.where.fact_id in held_back:
            continue
        existing = root / item.where.relative
        if not os.path.lexists(existing):
            plan.place.append(item)
        elif _sha(existing) == item.sha256:
            plan.same += 1
        else:
            plan.conflicts.append(Conflict(plan.scope, item.where.kind, item.where.relative,
                                           "a different file with this name is here"))


def plan_restore(bundle: Bundle, paths: EnginePaths, on_conflict: OnConflict = "skip",
                 revise: Collection[str] = ()) -> list[ScopePlan]:
    """Per scope present in the bundle: restore when its store is empty, else merge."""
    fs = FS()
    plans = []
    for scope in SCOPE_NAMES:
        files = bundle.of_scope(scope)
        if not files:
            continue
        if is_empty_store(paths.store_dir(scope)):
            plans.append(ScopePlan(scope, "restore", place=files))
        else:
            plan = ScopePlan(scope, "merge")
            _plan_merge(plan, bundle, paths, fs, on_conflict, revise)
            plans.append(plan)
    return plans


@contextmanager
def staging_area(paths: EnginePaths) -> Iterator[Path]:
    """A private folder inside the state root (S2.4), removed again whatever happens."""
    base = paths.global_data
    if base.is_symlink():  # staging must stay inside the state root (S2.4)
        raise ContextEngineError(f"{base} is a symbolic link; refusing to stage a bundle there")
    created = [d for d in (base, *base.parents) if not d.exists()]
    make_private_dirs(base)
    staging = base / f"import-{secrets.token_hex(8)}"
    make_private_dirs(staging)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for directory in created:  # innermost first; a store placed meanwhile keeps its own
            with suppress(OSError):
                os.rmdir(directory)


def _staged(item: BundleFile) -> StagedFile:
    assert item.staged is not None
    return StagedFile(item.staged, item.where.relative, item.mtime_ns)


def _apply(plans: list[ScopePlan], paths: EnginePaths, check: Callable[[], None],
           progress: Callable[[int], None]) -> int:
    """Hand every planned file to the stores' restore primitive; all scopes or none."""
    stores = []
    for plan in plans:
        index = next((i for i in plan.place if i.where.kind == "index"), None)
        stores.append(StoreRestore(
            paths.store_dir(plan.scope),
            [_staged(i) for i in plan.place if i.where.kind != "index"],
            _staged(index) if index is not None and plan.mode == "restore" else None,
            empty=plan.mode == "restore",
        ))
    return restore_stores(FS(), stores, check=check, progress=progress)


def _revise(plans: list[ScopePlan], catalog: LocalCatalog, person: Person) -> list[Fact]:
    revised = []
    for plan in plans:
        for conflict, fact, target in plan.revise:
            saved = save_as_revision(catalog, fact, target, person)
            if saved is not None:
                revised.append(saved)
                done = f"revision {saved.revision}"
            else:
                done = "unchanged"
            plan.conflicts.append(Conflict(conflict.scope, conflict.kind, conflict.path,
                                           conflict.detail, conflict.target, done))
        plan.revise.clear()
    return revised


def restore_bundle(
    paths: EnginePaths,
    bundle_path: Path,
    *,
    write: bool,
    on_conflict: OnConflict = "skip",
    revise: Collection[str] = (),
    limits: Limits = DEFAULT_LIMITS,
    progress: ProgressFn = no_progress,
    check: Callable[[], None] = lambda: None,
    surface: Surface = "cli",
) -> RestoreReport:
    """Validate the bundle, plan per scope, and (``write``) restore or merge it.

    A differing fact is skipped unless ``on_conflict`` is ``"revision"`` or its path
    (``project/<name>.md``, or ``<name>.md`` as the plan lists it) is in ``revise``: the
    person's choice, per conflict or for all of them.
    """
    if not write:
        bundle = read_bundle(bundle_path, limits=limits, check=check,
                             progress=lambda n, w: progress(n, 0, w))
        plans = plan_restore(bundle, paths, on_conflict, revise)
        return RestoreReport(tuple(plans), 0, (), False)
    with staging_area(paths) as staging:
        bundle = read_bundle(bundle_path, staging=staging, limits=limits, check=check,
                             progress=lambda n, w: progress(n, 0, w))
        plans = plan_restore(bundle, paths, on_conflict, revise)
        total = sum(len(p.place) for p in plans)
        placed = _apply(plans, paths, check, lambda n: progress(n, total, "placing"))
    catalog = LocalCatalog(paths)
    revised = _revise(plans, catalog, Person(surface))
    if any(p.mode == "merge" for p in plans):  # a restore is exactly the bundle's files
        catalog.rebuild_indexes()
    progress(total, total, "")
    return RestoreReport(tuple(plans), placed, tuple(revised), True)
