"""Bytes to text for fact files: size limit, BOMs, UTF-16, GB18030 fallback (S3.4)."""

from __future__ import annotations

from context_engine.errors import FactFormatError

MAX_FACT_BYTES = 4 * 1024 * 1024

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_LE_BOM = b"\xff\xfe"
_UTF16_BE_BOM = b"\xfe\xff"


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_fact_bytes(data: bytes) -> str:
    """Decode a fact file strictly; every failure is a ``FactFormatError`` with a reason."""
    return decode_fact(data)[0]


def decode_fact(data: bytes) -> tuple[str, str]:
    """(text, encoding) of a fact file; every failure is a ``FactFormatError`` with a reason.

    Order: size limit, UTF-8 BOM, UTF-16 BOM (LE/BE), NUL bytes (``binary``), UTF-8, GB18030.
    Encoding names: utf-8, utf-8-sig, utf-16-le, utf-16-be, gb18030.
    """
    if len(data) > MAX_FACT_BYTES:
        raise FactFormatError(
            "too_large", f"fact file is larger than {MAX_FACT_BYTES} bytes ({len(data)})"
        )
    if data.startswith(_UTF8_BOM):
        return _decode(data, len(_UTF8_BOM), "utf-8"), "utf-8-sig"
    if data.startswith(_UTF16_LE_BOM) and not data.startswith(b"\xff\xfe\x00\x00"):
        return _reject_nul(_decode(data, 2, "utf-16-le")), "utf-16-le"
    if data.startswith(_UTF16_BE_BOM):
        return _reject_nul(_decode(data, 2, "utf-16-be")), "utf-16-be"
    nul = data.find(b"\0")
    if nul >= 0:
        raise FactFormatError("binary", "fact file contains NUL bytes", _line_of(data, nul))
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as utf8_error:
        try:
            # Reasonix reads GB18030 facts written by Chinese-locale editors.
            return data.decode("gb18030"), "gb18030"
        except UnicodeDecodeError:
            offset = utf8_error.start
            raise FactFormatError(
                "encoding",
                f"fact file is neither UTF-8 nor GB18030 (invalid byte at offset {offset})",
                _line_of(data, offset),
            ) from None


def _decode(data: bytes, start: int, encoding: str) -> str:
    try:
        return data[start:].decode(encoding)
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        raise FactFormatError(
            "encoding",
            f"fact file is not valid {encoding} (invalid byte at offset {offset})",
            None if encoding.startswith("utf-16") else _line_of(data, offset),
        ) from None


def _reject_nul(text: str) -> str:
    nul = text.find("\0")
    if nul >= 0:
        raise FactFormatError(
            "binary", "fact file contains NUL characters", text.count("\n", 0, nul) + 1
        )
    return text
