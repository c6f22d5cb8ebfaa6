"""Helpers for the derived-index tests: fresh reader processes and raw edits by other programs.

Kept out of the test modules so ``multiprocessing`` spawn children can import them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from context_engine.facts.memory import Memory
from context_engine.facts.store import LoadedFile
from context_engine.paths import EnginePaths

ROOT = Path(__file__).resolve().parents[2]

# A fresh process reading both stores through the derived index (its racy window shortened so
# rows it or an earlier process recorded are trusted within a test) and printing what it saw.
READER = r"""
import json, sys
from context_engine.facts import derived_index, store
derived_index.RACY_NS = store.RACY_NS = int(sys.argv[3])
from context_engine.facts.memory import Memory
from context_engine.facts.store import LoadedFile
from context_engine.paths import EnginePaths
paths = EnginePaths.resolve(home=sys.argv[1], workspace=sys.argv[2], root=sys.argv[2])
memory = Memory(paths)
for s in memory.stores.all():
    s.index.create = sys.argv[4] == "1"
snap = memory.snapshot()
print(json.dumps({
    "facts": [[repr(f), str(f.path), repr(f.stamp)] for f in snap.facts],
    "diagnostics": [[d.code, str(d.path), d.message, d.line] for d in snap.diagnostics],
}))
"""


# The ``context-engine`` command line in a fresh process, its racy window shortened likewise.
CLI = r"""
import sys
from context_engine.facts import derived_index, store
derived_index.RACY_NS = store.RACY_NS = int(sys.argv[1])
sys.argv = ["context-engine", *sys.argv[2:]]
from context_engine.cli.entry import main
main()
"""


def cli_in_fresh_process(
    paths: EnginePaths, *args: str, racy_ns: int = 30_000_000
) -> tuple[int, str]:
    """(exit code, stdout) of ``context-engine --json <args>`` run by a new process."""
    out = subprocess.run(
        [sys.executable, "-c", CLI, str(racy_ns), "--home", str(paths.home), "--workspace",
         str(paths.root), "--json", *args],
        capture_output=True, env=child_env(), timeout=120, check=False,
    )
    return out.returncode, out.stdout.decode("utf-8")


def cli_from_full_parse(paths: EnginePaths, *args: str) -> tuple[int, str]:
    """What ``cli_in_fresh_process`` must print for ``list`` / ``read REF``: every file parsed,
    the fact printed by ``fact_json``, a ref resolved by the rules of a full parse."""
    from context_engine.cli.facts_cmds import fact_json
    from context_engine.errors import ContextEngineError

    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    if args == ("list",):
        payload: dict[str, object] = {"facts": [fact_json(f) for f in memory.snapshot().facts]}
        return 0, json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    assert args[0] == "read" and len(args) == 2
    try:
        fact = full_parse_resolve(memory, args[1]).fact
    except ContextEngineError as exc:
        error = {"error": {"code": exc.code, "message": exc.message}}
        return 1, json.dumps(error, ensure_ascii=False) + "\n"
    payload = {"fact": fact_json(fact), "body": fact.body}
    return 0, json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def full_parse_resolve(memory: Memory, ref: str) -> LoadedFile:
    """The ref resolver's rules over full snapshots (no derived index): what a read must find.

    An id: the first file carrying it (project store first, files by name and id); else, in
    each store a reference names (project first): the name's own file when its frontmatter
    name matches, else the first file (by name and id) whose frontmatter claims the name.
    """
    from context_engine.facts.refs import parse_ref

    stores = memory.stores
    parsed = parse_ref(ref)
    if parsed.id is not None:
        for store in stores.all():
            for fact in store.snapshot().facts:
                if fact.id == parsed.id and fact.path is not None:
                    loaded = store.load(fact.path)
                    if loaded is not None and loaded.fact.id == parsed.id:
                        return loaded
    for scope in parsed.scopes:
        store = stores.get(scope)
        for name in parsed.names:
            loaded = store.load_name(name)
            if loaded is not None and loaded.fact.name in parsed.names:
                return loaded
        for fact in store.snapshot().facts:
            if fact.name in parsed.names and fact.path is not None:
                loaded = store.load(fact.path)
                if loaded is not None and loaded.fact.name in parsed.names:
                    return loaded
    raise parsed.not_found()


def child_env() -> dict[str, str]:
    """The environment for a child process that imports the engine from this tree."""
    path = os.pathsep.join([str(ROOT / "app"), str(ROOT / "tests")])
    return dict(os.environ, PYTHONPATH=path)


def read_in_fresh_process(
    paths: EnginePaths, *, racy_ns: int = 30_000_000, create: bool = True
) -> dict[str, list[list[object]]]:
    """What a new process reads from both stores (through the index)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            READER,
            str(paths.home),
            str(paths.root),
            str(racy_ns),
            "1" if create else "0",
        ],
        check=True,
        capture_output=True,
        env=child_env(),
        timeout=120,
    )
    result: dict[str, list[list[object]]] = json.loads(out.stdout)
    return result


def full_parse(paths: EnginePaths) -> dict[str, list[list[object]]]:
    """Both stores read by parsing every file, in the reader's JSON shape."""
    memory = Memory(paths)
    for store in memory.stores.all():
        store.index = None
    snap = memory.snapshot()
    return {
        "facts": [[repr(f), str(f.path), repr(f.stamp)] for f in snap.facts],
        "diagnostics": [[d.code, str(d.path), d.message, d.line] for d in snap.diagnostics],
    }


def save_worker(home: str, ws: str, names: list[str]) -> int:
    """Save ``names`` one by one in this process (a concurrent writer)."""
    paths = EnginePaths.resolve(home=home, workspace=ws, root=ws)
    memory = Memory(paths)
    for name in names:
        memory.save(name=name, description=f"about {name}", body=f"Body of {name}.")
    return len(names)


def crash_after_file_write(home: str, ws: str) -> None:
    """Save one fact and die right after its file is written, before the index hears of it."""
    from context_engine.facts import derived_index

    real = derived_index.FactIndex.update

    def die(
        self: derived_index.FactIndex, changed: object, removed: object = (), **watch: object
    ) -> bool:
        entries = list(changed)  # type: ignore[call-overload]
        if any(entry[0] == "crashed.md" for entry in entries):
            os._exit(3)
        return real(self, entries, removed, **watch)  # type: ignore[arg-type]

    derived_index.FactIndex.update = die  # type: ignore[method-assign]
    paths = EnginePaths.resolve(home=home, workspace=ws, root=ws)
    Memory(paths).save(name="crashed", description="written, never indexed", body="Crash.")


def replace_raw(path: Path, data: bytes) -> None:
    """Another program's atomic replacement (temp file + rename; new inode)."""
    tmp = path.with_name(f".other-{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def edit_in_place_same_size(path: Path, old: bytes, new: bytes) -> bool:
    """An editor writing in place: same inode, same size, the mtime put back."""
    data = path.read_bytes()
    if old not in data or len(old) != len(new):
        return False
    before = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(data.replace(old, new, 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return True


def raw_fact(name: str, body: str, *, description: str = "", id_hex: str = "") -> bytes:
    """A project fact's bytes as another program (Reasonix, an editor) would write them."""
    from context_engine.facts.codec import render_fact
    from context_engine.facts.model import Fact

    fact_id = "mem-" + (id_hex or f"{abs(hash(name)) % 16**32:032x}")
    return render_fact(
        Fact(
            id=fact_id,
            revision=1,
            name=name,
            title="",
            description=description or f"About {name}",
            type="project",
            scope="project",
            body=body,
        )
    )
