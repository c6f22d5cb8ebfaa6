"""JSON form of every catalog value, and back (remote protocol, ``docs/remote-protocol.md``).

``decode_*(encode_*(v)) == v`` for every value a ``LocalCatalog`` returns, so a remote catalog
hands the app and the CLI the same engine types. Paths stay the server's paths: they are shown
(local display only) and sent back as given, never opened on the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, cast

from ..facts.archive import ArchivedEntry
from ..facts.memory import MemorySnapshot
from ..facts.model import Diagnostic, Fact, FactType, Scope
from ..instructions import ImportRecord, InstructionDiagnostic, InstructionDocument, Resolution
from ..instructions.model import InstructionScope
from ..instructions.report import document_payload
from ..recall.trace import RecallTrace
from ..suggestions.accept import Edits
from ..suggestions.model import MemoryCandidate, ScanDiagnostic, SkillCandidate, Suggestions
from ..suggestions.payload import suggestions_json
from .base import History, InstructionsView, LoadedFact, RecallRun, SearchHit
from .errors import ProtocolError
from .ops import (
    SAVE_FIELDS,
    SURFACES,
    Accept,
    Actor,
    Agent,
    ControllerName,
    Forget,
    ModeName,
    Op,
    Person,
    Recover,
    Restore,
    Save,
    WriteDecision,
    WriteOutcome,
)

Json = dict[str, Any]
_T = TypeVar("_T")
_SAVE_KEYS = (*SAVE_FIELDS, "expected_digest", "create_only")
_SAVE_TEXTS = (*SAVE_FIELDS[:-1], "expected_digest")
_DECISIONS: tuple[WriteDecision, ...] = ("auto", "confirm", "denied", "explicit")
CONTROLLERS: tuple[ControllerName, ...] = ("interactive", "headless", "subagent")
MODE_NAMES: tuple[ModeName, ...] = ("ask", "auto", "yolo")


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_time(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _path(value: object) -> Path | None:
    return Path(value) if isinstance(value, str) else None


# -- facts ---------------------------------------------------------------------------------------


def encode_fact(fact: Fact, *, with_path: bool = True) -> Json:
    """Every field of a fact (the body too; ``stamp`` is local-only and dropped).

    Lists leave ``path`` out (``with_path=False``): it is the server's path, never compared,
    and building 10,000 ``Path`` objects was the largest cost of decoding a list.
    """
    return {
        "id": fact.id, "revision": fact.revision, "name": fact.name, "title": fact.title,
        "description": fact.description, "type": fact.type, "scope": fact.scope,
        "body": fact.body, "created_at": _time(fact.created_at),
        "updated_at": _time(fact.updated_at),
        "path": str(fact.path) if with_path and fact.path is not None else None,
        "extra": [[key, value] for key, value in fact.extra],
    }  # fmt: skip


def decode_fact(data: Mapping[str, Any]) -> Fact:
    """Inverse of :func:`encode_fact`."""
    return Fact(id=str(data["id"]), revision=int(data["revision"]), name=str(data["name"]),
                title=str(data["title"]), description=str(data["description"]),
                type=cast(FactType, data["type"]), scope=cast(Scope, data["scope"]),
                body=str(data["body"]), created_at=_parse_time(data.get("created_at")),
                updated_at=_parse_time(data.get("updated_at")), path=_path(data.get("path")),
                extra=tuple((str(k), v) for k, v in data.get("extra", ())))


def encode_diagnostic(diag: Diagnostic) -> Json:
    """A store diagnostic."""
    return {"code": diag.code, "path": str(diag.path), "message": diag.message, "line": diag.line}


def decode_diagnostic(data: Mapping[str, Any]) -> Diagnostic:
    """Inverse of :func:`encode_diagnostic`."""
    return Diagnostic(str(data["code"]), Path(data["path"]), str(data["message"]), data.get("line"))


def encode_snapshot(snapshot: MemorySnapshot) -> Json:
    """``{"facts": [...], "diagnostics": [...]}``."""
    return {
        "facts": [encode_fact(f, with_path=False) for f in snapshot.facts],
        "diagnostics": [encode_diagnostic(d) for d in snapshot.diagnostics],
    }


def decode_snapshot(data: Mapping[str, Any]) -> MemorySnapshot:
    """Inverse of :func:`encode_snapshot`."""
    return MemorySnapshot(
        tuple(decode_fact(f) for f in data["facts"]),
        tuple(decode_diagnostic(d) for d in data["diagnostics"]),
    )


def encode_loaded(loaded: LoadedFact) -> Json:
    """``{"fact", "digest"}``."""
    return {"fact": encode_fact(loaded.fact), "digest": loaded.digest}


def decode_loaded(data: Mapping[str, Any]) -> LoadedFact:
    """Inverse of :func:`encode_loaded`."""
    return LoadedFact(decode_fact(data["fact"]), str(data["digest"]))


def encode_hits(hits: tuple[SearchHit, ...]) -> Json:
    """``{"hits": [{"fact", "score", "snippet"}]}``."""
    return {
        "hits": [
            {"fact": encode_fact(h.fact), "score": h.score, "snippet": h.snippet} for h in hits
        ]
    }


def decode_hits(data: Mapping[str, Any]) -> tuple[SearchHit, ...]:
    """Inverse of :func:`encode_hits`."""
    return tuple(
        SearchHit(decode_fact(h["fact"]), float(h["score"]), str(h["snippet"]))
        for h in data["hits"]
    )


def encode_history(history: History) -> Json:
    """``{"active", "revisions", "writers"}`` (writers: revision as a string → who wrote it)."""
    return {
        "active": encode_fact(history.active),
        "revisions": [encode_fact(f) for f in history.revisions],
        "writers": {str(rev): who for rev, who in history.writers.items()},
    }


def decode_history(data: Mapping[str, Any]) -> History:
    """Inverse of :func:`encode_history`; a server without ``writers`` knows none."""
    raw = data.get("writers")
    writers = {int(rev): str(who) for rev, who in raw.items()
               if str(rev).isdigit()} if isinstance(raw, Mapping) else {}
    return History(decode_fact(data["active"]), tuple(decode_fact(f) for f in data["revisions"]),
                   MappingProxyType(writers))


def encode_archived(entries: tuple[ArchivedEntry, ...]) -> Json:
    """``{"archived": [{"path", "archived_at", "fact", "diagnostic"}]}``."""
    return {
        "archived": [
            {
                "path": str(e.path),
                "archived_at": e.archived_at.isoformat(),
                "fact": encode_fact(e.fact) if e.fact is not None else None,
                "diagnostic": encode_diagnostic(e.diagnostic) if e.diagnostic else None,
            }
            for e in entries
        ]
    }


def decode_archived(data: Mapping[str, Any]) -> tuple[ArchivedEntry, ...]:
    """Inverse of :func:`encode_archived`."""
    return tuple(
        ArchivedEntry(
            path=Path(e["path"]),
            archived_at=datetime.fromisoformat(e["archived_at"]),
            fact=decode_fact(e["fact"]) if e.get("fact") else None,
            diagnostic=decode_diagnostic(e["diagnostic"]) if e.get("diagnostic") else None,
        )
        for e in data["archived"]
    )


# -- instructions --------------------------------------------------------------------------------


def _encode_document(doc: InstructionDocument) -> Json:
    """The S12 document object plus what a remote view needs to show it (body, raw, labels)."""
    extra = {"dir_label": doc.dir_label, "local": doc.local, "body": doc.body, "raw": doc.raw}
    return {**document_payload(doc), **extra}


def _decode_document(data: Mapping[str, Any]) -> InstructionDocument:
    return InstructionDocument(
        order=int(data["order"]),
        scope=cast(InstructionScope, data["scope"]),
        label=str(data["label"]),
        path=Path(data["path"]),
        directory=Path(data["directory"]),
        dir_label=str(data["dir_label"]),
        local=bool(data["local"]),
        body=str(data["body"]),
        raw=str(data["raw"]),
        imports=tuple(
            ImportRecord(Path(i["path"]), Path(i["source"]), int(i["line"]))
            for i in data["imports"]
        ),
    )


def encode_instructions(view: InstructionsView) -> Json:
    """The resolution (documents with bodies, diagnostics) and the provider block."""
    res = view.resolution
    return {
        "root": str(res.root),
        "target": str(res.target),
        "home": str(res.home) if res.home is not None else None,
        "documents": [_encode_document(d) for d in res.documents],
        "diagnostics": [
            {
                "code": d.code,
                "source": str(d.source) if d.source is not None else None,
                "line": d.line,
                "path": d.path,
                "message": d.message,
            }
            for d in res.diagnostics
        ],
        "block": view.block,
    }


def decode_instructions(data: Mapping[str, Any]) -> InstructionsView:
    """Inverse of :func:`encode_instructions` (``watched`` is local-only and left empty)."""
    resolution = Resolution(
        root=Path(data["root"]),
        target=Path(data["target"]),
        home=_path(data.get("home")),
        documents=tuple(_decode_document(d) for d in data["documents"]),
        diagnostics=tuple(
            InstructionDiagnostic(
                str(d["code"]),
                _path(d.get("source")),
                d.get("line"),
                str(d["path"]),
                str(d["message"]),
            )
            for d in data["diagnostics"]
        ),
    )
    return InstructionsView(resolution, str(data["block"]))


# -- recall --------------------------------------------------------------------------------------


def encode_trace(trace: RecallTrace | None) -> Json | None:
    """``RecallTrace.to_dict()`` (None stays None)."""
    return trace.to_dict() if trace is not None else None


def decode_trace(data: Mapping[str, Any] | None) -> RecallTrace | None:
    """``RecallTrace.from_dict``."""
    return RecallTrace.from_dict(dict(data)) if data is not None else None


def encode_run(run: RecallRun) -> Json:
    """``{"block", "trace"}``."""
    return {"block": run.block, "trace": run.trace.to_dict()}


def decode_run(data: Mapping[str, Any]) -> RecallRun:
    """Inverse of :func:`encode_run`."""
    return RecallRun(str(data["block"]), RecallTrace.from_dict(dict(data["trace"])))


# -- suggestions ---------------------------------------------------------------------------------


def encode_suggestions(result: Suggestions) -> Json:
    """Every candidate with its evidence, and the scan's diagnostics and sessions."""
    return {
        **suggestions_json(result),
        "diagnostics": [
            {"code": d.code, "path": str(d.path), "message": d.message, "count": d.count}
            for d in result.diagnostics
        ],
        "sessions": list(result.sessions),
    }


def decode_suggestions(data: Mapping[str, Any]) -> Suggestions:
    """Inverse of :func:`encode_suggestions`."""
    return Suggestions(
        available=bool(data["available"]),
        memories=tuple(
            MemoryCandidate(id=str(m["id"]), name=str(m["name"]), title=str(m["title"]),
                            description=str(m["description"]), type=cast(FactType, m["type"]),
                            scope=cast(Scope, m["scope"]), reason=str(m["reason"]),
                            evidence=tuple(str(e) for e in m["evidence"]), body=str(m["body"]))
            for m in data["memories"]
        ),
        skills=tuple(
            SkillCandidate(id=str(s["id"]), name=str(s["name"]), description=str(s["description"]),
                           evidence=tuple(str(e) for e in s["evidence"]), body=str(s["body"]))
            for s in data["skills"]
        ),
        diagnostics=tuple(
            ScanDiagnostic(str(d["code"]), Path(d["path"]), str(d["message"]), int(d["count"]))
            for d in data.get("diagnostics", ())
        ),
        sessions=tuple(str(s) for s in data.get("sessions", ())),
    )


def encode_edits(edits: Edits) -> Json:
    """The fields a person changed before accepting (None: keep the proposal)."""
    fields = ("name", "title", "description", "type", "scope", "body")
    return {field: getattr(edits, field) for field in fields}


def decode_edits(data: Mapping[str, Any] | None) -> Edits:
    """Inverse of :func:`encode_edits`."""
    data = data or {}
    return Edits(name=data.get("name"), title=data.get("title"),
                 description=data.get("description"), type=data.get("type"),
                 scope=data.get("scope"), body=data.get("body"))


def encode_op(op: Op) -> Json:
    """``{"kind": "save"|"forget"|"restore"|"recover"|"accept", …the op's fields}``."""
    if isinstance(op, Save):
        return {"kind": "save", **{f: getattr(op, f) for f in _SAVE_KEYS}}
    if isinstance(op, Forget):
        return {"kind": "forget", "ref": op.ref}
    if isinstance(op, Restore):
        return {
            "kind": "restore",
            "ref": op.ref,
            "revision": op.revision,
            "expected_revision": op.expected_revision,
        }
    if isinstance(op, Recover):
        return {"kind": "recover", "path": op.archive_path}
    edits = encode_edits(op.edits) if op.edits is not None else None
    return {"kind": "accept", "id": op.candidate_id, "edits": edits}


def decode_op(data: Mapping[str, Any]) -> Op:
    """Inverse of :func:`encode_op`; a wrong shape raises ``ProtocolError``."""
    try:
        kind = data["kind"]
        if kind == "save":
            text = {key: _optional(data.get(key), str, key) for key in _SAVE_TEXTS}
            return Save(name=text["name"], title=text["title"], description=text["description"],
                        type=text["type"], scope=text["scope"], body=text["body"], id=text["id"],
                        expected_revision=_optional(data.get("expected_revision"), int, "revision"),
                        expected_digest=text["expected_digest"],
                        create_only=bool(data.get("create_only", False)))
        if kind == "forget":
            return Forget(_required(data, "ref", str))
        if kind == "restore":
            return Restore(
                _required(data, "ref", str),
                _required(data, "revision", int),
                _optional(data.get("expected_revision"), int, "expected_revision"),
            )
        if kind == "recover":
            return Recover(_required(data, "path", str))
        if kind == "accept":
            edits = data.get("edits")
            return Accept(_required(data, "id", str), decode_edits(edits) if edits else None)
    except (KeyError, TypeError) as exc:
        raise ProtocolError(f"malformed write op: {exc}") from exc
    raise ProtocolError(f"unknown write op: {data.get('kind')!r}")


def encode_actor(actor: Actor) -> Json:
    """``{"kind": "person", "surface"}`` or ``{"kind": "agent", "controller", "mode", …}``."""
    if isinstance(actor, Person):
        return {"kind": "person", "surface": actor.surface}
    return {
        "kind": "agent",
        "controller": actor.controller,
        "mode": actor.mode,
        "owns_store": actor.owns_store,
    }


def decode_actor(data: Mapping[str, Any]) -> Actor:
    """Inverse of :func:`encode_actor`; unknown values raise ``ProtocolError``."""
    kind = data.get("kind")
    if kind == "person":
        surface = next((s for s in SURFACES if s == data.get("surface")), None)
        if surface is not None:
            return Person(surface)
    if kind == "agent":
        controller = next((c for c in CONTROLLERS if c == data.get("controller")), None)
        mode = next((m for m in MODE_NAMES if m == data.get("mode")), None)
        if controller is not None and mode is not None:
            return Agent(controller, mode, bool(data.get("owns_store", True)))
    raise ProtocolError(f"unknown actor: {dict(data)!r}")


def _required(data: Mapping[str, Any], key: str, kind: type[_T]) -> _T:
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{key} must be {kind.__name__}")
    return value


def _optional(value: object, kind: type[_T], key: str) -> _T | None:
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{key} must be {kind.__name__}")
    return value


def encode_outcome(outcome: WriteOutcome) -> Json:
    """The outcome less what stays in process (``changes``, ``warnings``)."""
    return {
        "decision": outcome.decision,
        "reason": outcome.reason,
        "written": outcome.written,
        "result": outcome.result,
        "fact": encode_fact(outcome.fact) if outcome.fact is not None else None,
        "archived": list(outcome.archived),
        "path": outcome.path,
        "findings": list(outcome.findings),
        "ran": outcome.ran,
    }


def decode_outcome(data: Mapping[str, Any]) -> WriteOutcome:
    """Inverse of :func:`encode_outcome`."""
    fact = data.get("fact")
    decision = next((d for d in _DECISIONS if d == data.get("decision")), None)
    if decision is None:
        raise ProtocolError(f"unknown write decision: {data.get('decision')!r}")
    path = data.get("path")
    return WriteOutcome(decision=decision, reason=str(data["reason"]),
                        written=bool(data["written"]), result=str(data["result"]),
                        fact=decode_fact(fact) if fact else None,
                        archived=tuple(str(p) for p in data.get("archived", ())),
                        path=str(path) if path is not None else None,
                        findings=tuple(str(f) for f in data.get("findings", ())),
                        ran=bool(data.get("ran", True)))
