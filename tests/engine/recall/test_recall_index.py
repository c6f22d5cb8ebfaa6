"""The index follows store changes per fact, never by a full rebuild (ARCHITECTURE, S8)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from context_engine.recall.index import DocMeta, SparseIndex
from context_engine.recall.pool import POOL, SHADOWED
from context_engine.recall.service import RecallService
from support.recall import NOW, fact, sample_store


def test_one_change_reflected_through_update_path() -> None:
    facts = sample_store() + [
        fact(f"filler-{i}", f"filler note {i} about nothing") for i in range(50)
    ]
    recaller = Recaller(facts)
    assert recaller.stats.full_builds == 1
    tokenized = recaller.stats.tokenized
    assert tokenized == len(facts)
    assert recaller.recall("Redis TTL 300s", now=NOW).trace.hits

    changed = [
        replace(f, revision=f.revision + 1, body="Memcached cluster mc-7 replaced Redis.")
        if f.name == "cache-layer"
        else f
        for f in facts
    ]
    assert recaller.sync(changed) == 1
    assert recaller.stats.full_builds == 1
    assert recaller.stats.tokenized == tokenized + 2  # old text out, new text in
    hits = recaller.recall("Memcached cluster", now=NOW).trace.hits
    assert [(h.name, h.revision) for h in hits] == [("cache-layer", 2)]
    assert recaller.recall("300s pubsub", now=NOW).trace.hits == ()


def test_unchanged_snapshot_does_no_work() -> None:
    facts = sample_store()
    recaller = Recaller(facts)
    before = recaller.stats.tokenized
    assert recaller.sync(list(facts)) == 0
    assert recaller.stats.tokenized == before


def test_removed_fact_leaves_index() -> None:
    facts = sample_store()
    recaller = Recaller(facts)
    recaller.sync([f for f in facts if f.name != "auth-handler-panic"])
    assert recaller.recall("AuthHandler 6928", now=NOW).trace.hits == ()
    assert len(recaller.pool) == len(facts) - 1


def test_override_follows_project_fact_arrival_and_departure() -> None:
    glob = fact("deploy-steps", "kubectl rollout restart deployment web", scope="global")
    recaller = Recaller([glob])
    assert recaller.membership(glob.reference) == POOL
    proj = fact("deploy-steps", "kubectl rollout via argo for this repo", scope="project")
    recaller.upsert(proj)
    assert recaller.membership(glob.reference) == SHADOWED
    assert [h.scope for h in recaller.recall("kubectl rollout", now=NOW).trace.hits] == ["project"]
    recaller.remove(proj.reference)
    assert recaller.membership(glob.reference) == POOL
    assert [h.scope for h in recaller.recall("kubectl rollout", now=NOW).trace.hits] == ["global"]


def test_override_by_id_only() -> None:
    glob = fact("old-name", "quokka gateway notes", scope="global", id="mem_shared")
    proj = fact("new-name", "quokka gateway project notes", scope="project", id="mem_shared")
    recaller = Recaller([glob, proj])
    trace = recaller.recall("quokka gateway", now=NOW).trace
    assert [h.name for h in trace.hits] == ["new-name"]
    assert any("same id" in d.detail for d in trace.dropped)


def test_large_posting_removal_keeps_other_documents() -> None:
    index = SparseIndex()
    for i in range(200):
        index.add(f"d{i}", Counter({"common": 1 + i % 3, f"own{i}": 1}), DocMeta())
    for i in range(0, 200, 2):
        index.remove(f"d{i}", ["common", f"own{i}"])
    assert index.df("common") == 100
    assert index.df("own0") == 0 and index.df("own1") == 1
    index.add("d0", Counter({"common": 5}), DocMeta())
    assert index.df("common") == 101
    assert index.total_length == sum(1 + i % 3 + 1 for i in range(1, 200, 2)) + 5


def test_workspace_recall_follows_disk_changes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = EnginePaths.resolve(
        home=tmp_path / "home", workspace=tmp_path / "ws", root=tmp_path / "ws"
    )
    (tmp_path / "ws").mkdir()
    paths.project_store.mkdir(parents=True)
    memory = Memory(paths)
    memory.save(name="zebra-cache", title="Zebra cache", description="cache notes",
                body="ZebraCache TTL is 300s", type="project", scope="project")
    memory.save(name="other", title="Other", description="other notes",
                body="Unrelated quokka text", type="project", scope="project")
    ws = RecallService(paths, lambda: memory, through_memory=True)
    assert len(ws.recaller().facts()) == 2
    assert ws.recaller().recall("ZebraCache TTL", now=NOW).trace.hits
    tokenized = ws.recaller().stats.tokenized
    updates = ws.recaller().stats.fact_updates
    memory.save(name="zebra-cache", body="ZebraCache TTL is now 900s after incident #77")
    recaller = ws.recaller()  # one changed fact: applied, not rebuilt
    assert recaller.stats.fact_updates == updates + 1
    assert recaller.stats.full_builds == 1
    assert recaller.stats.tokenized == tokenized + 2
    hits = recaller.recall("ZebraCache incident #77", now=NOW).trace.hits
    assert [(h.name, h.revision) for h in hits] == [("zebra-cache", 2)]
    memory.forget("zebra-cache")
    assert ws.recaller().recall("ZebraCache incident #77", now=NOW).trace.hits == ()


def test_global_stays_shadowed_while_any_equivalent_project_fact_remains() -> None:
    glob = fact("g", "quokka gateway", title="Shared Title", scope="global")
    p1 = fact("p1", "quokka gateway one", title="shared title", scope="project")
    p2 = fact("p2", "quokka gateway two", title="SHARED-TITLE", scope="project")
    recaller = Recaller([glob, p1, p2])
    assert recaller.membership(glob.reference) == SHADOWED
    recaller.remove(p1.reference)
    assert recaller.membership(glob.reference) == SHADOWED
    recaller.upsert(replace(p2, title="something else", revision=2))
    assert recaller.membership(glob.reference) == POOL
    recaller.upsert(replace(p2, title="Shared title", revision=3))
    assert recaller.membership(glob.reference) == SHADOWED


class _CountingPostings(dict[str, bytes]):
    """Frozen postings that count their lookups (a database view in a host)."""

    lookups: Counter[str]

    def get(self, term: str, default: object = None) -> bytes | None:  # type: ignore[override]
        self.lookups[term] += 1
        return super().get(term)


def test_a_term_missing_from_frozen_postings_is_looked_up_once() -> None:
    built = SparseIndex()
    built.add_many((f"k{i}", {"docker": 1 + i % 2, f"own{i}": 1}, DocMeta()) for i in range(4))
    keys, free, terms, blobs, arrays, total = built.export()
    frozen = _CountingPostings(zip(terms, blobs, strict=True))  # type: ignore[arg-type]
    frozen.lookups = Counter()
    lazy = SparseIndex.lazy(keys, free, frozen, arrays, total)  # type: ignore[arg-type]
    for _ in range(3):
        assert lazy.df("zebra") == 0 and lazy.df("docker") == 4
    assert frozen.lookups == Counter({"zebra": 1, "docker": 1})
    lazy.add("k9", {"zebra": 2, "docker": 1}, DocMeta())  # the missing term arrives
    assert lazy.df("zebra") == 1 and lazy.df("docker") == 5
    lazy.remove("k9", ["zebra", "docker"])
    assert lazy.df("zebra") == 0 and lazy.df("docker") == 4
    assert lazy.changed_postings()["zebra"] is None
