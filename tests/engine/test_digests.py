"""The built-in digests are hashlib's (context_engine/digests.py)."""

from __future__ import annotations

import hashlib

from context_engine import digests


def test_the_digests_are_hashlibs() -> None:
    for data in (b"", b"abc", "发布\0x".encode(), bytes(range(256)) * 40):
        assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert (digests.blake2b(data, digest_size=16).hexdigest()
                == hashlib.blake2b(data, digest_size=16).hexdigest())
