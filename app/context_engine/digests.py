"""SHA-256 and BLAKE2b from CPython's built-in modules, without loading OpenSSL (issue 14).

``import hashlib`` always loads the OpenSSL bindings (``_hashlib``), a few ms of every hook
process, which only ever needs these two digests; ``hashlib`` is the fallback where a build
lacks the built-in modules. The digests are the same bytes either way.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not ``typing``'s: the relayed hook process imports no ``typing``
if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:  # CPython 3.11's module (3.12 renamed it ``_sha2``: there hashlib serves, as before)
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - depends on the Python build
        from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - depends on the Python build
        from hashlib import blake2b

__all__ = ["blake2b", "sha256"]
