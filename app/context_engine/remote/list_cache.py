"""``facts/list`` as JSON text, re-encoding only the facts whose file changed.

A list of 10,000 facts is about 4 MB of JSON; encoding it was most of the server's cost per
call. Each fact's text is kept under (id, revision, scope, name, file stamp): an unchanged file
has an unchanged stamp, so an unchanged fact reuses its text and a refresh after one edit
encodes one fact. Facts without a stamp are always encoded.
"""

from __future__ import annotations

import json

from ..catalog import wire
from ..facts.memory import MemorySnapshot
from ..facts.model import Fact

_Key = tuple[str, int, str, str, object]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class FactListCache:
    """Per-fact JSON text of the last list; entries not in the newest list are dropped."""

    def __init__(self) -> None:
        self._texts: dict[_Key, str] = {}

    def encode(self, snapshot: MemorySnapshot) -> str:
        """The JSON text of ``wire.encode_snapshot(snapshot)`` (same value, cheaper)."""
        fresh: dict[_Key, str] = {}
        parts = []
        for fact in snapshot.facts:
            parts.append(self._text(fact, fresh))
        self._texts = fresh
        diagnostics = _dumps([wire.encode_diagnostic(d) for d in snapshot.diagnostics])
        return '{"facts":[' + ",".join(parts) + '],"diagnostics":' + diagnostics + "}"

    def _text(self, fact: Fact, fresh: dict[_Key, str]) -> str:
        if fact.stamp is None:
            return _dumps(wire.encode_fact(fact, with_path=False))
        key: _Key = (fact.id, fact.revision, fact.scope, fact.name, fact.stamp)
        text = self._texts.get(key)
        if text is None:
            text = _dumps(wire.encode_fact(fact, with_path=False))
        fresh[key] = text
        return text
