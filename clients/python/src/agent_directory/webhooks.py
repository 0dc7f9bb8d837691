"""Verification of the signed webhooks the Agent Directory sends.

Each delivery is a POST with a JSON body and the header
``X-Service-Signature: sha256=<hex>``, where ``<hex>`` is the HMAC-SHA256 of the
exact body bytes keyed with the endpoint's secret. Verify the raw bytes as
received, before parsing the JSON: re-serialising the parsed body changes bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import string
from typing import Optional, Union

__all__ = ["SIGNATURE_HEADER", "sign_webhook", "verify_webhook"]

#: Name of the header carrying the signature.
SIGNATURE_HEADER = "X-Service-Signature"

_PREFIX = "sha256="
_HEX = frozenset(string.hexdigits)


def _as_bytes(value: Union[str, bytes, bytearray, memoryview]) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def sign_webhook(secret: Union[str, bytes], body: Union[str, bytes, bytearray, memoryview]) -> str:
    """The ``X-Service-Signature`` value for ``body``: ``sha256=<hex HMAC-SHA256>``."""
    digest = hmac.new(_as_bytes(secret), _as_bytes(body), hashlib.sha256).hexdigest()
    return _PREFIX + digest


def verify_webhook(
    secret: Union[str, bytes],
    body_bytes: Union[bytes, bytearray, memoryview, str],
    signature_header: Optional[str],
) -> bool:
    """True when ``signature_header`` is the valid signature of ``body_bytes`` under ``secret``.

    ``signature_header`` is the value of ``X-Service-Signature``, normally
    ``sha256=<64 hex digits>``; a bare hex digest is accepted too. A missing,
    malformed or wrong signature gives False (never an exception). The
    comparison takes constant time (:func:`hmac.compare_digest`).
    """
    if not isinstance(signature_header, str) or not secret:
        return False
    value = signature_header.strip()
    if value[: len(_PREFIX)].lower() == _PREFIX:
        value = value[len(_PREFIX) :]
    if len(value) != 64 or not all(ch in _HEX for ch in value):
        return False
    try:
        expected = hmac.new(_as_bytes(secret), _as_bytes(body_bytes), hashlib.sha256).hexdigest()
    except (TypeError, ValueError):
        return False
    return hmac.compare_digest(expected, value.lower())
