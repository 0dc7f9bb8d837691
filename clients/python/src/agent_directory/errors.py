"""Exceptions raised by the Agent Directory client.

Every error response of the API is an RFC 9457 problem details document
(``application/problem+json``) with a stable ``code``. :class:`AgentDirectoryError`
carries its fields; the subclasses let callers catch the common cases by type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Type

__all__ = [
    "FieldError",
    "AgentDirectoryError",
    "ValidationFailed",
    "InvalidApiKey",
    "NotFound",
    "Conflict",
    "VerificationFailed",
    "RateLimited",
    "ServerError",
    "TransportError",
    "error_from_response",
]


@dataclass(frozen=True)
class FieldError:
    """One entry of a problem's ``errors`` list: which field (JSON pointer) and what is wrong."""

    pointer: str
    detail: str


class AgentDirectoryError(Exception):
    """Base class of every error the client raises.

    For an HTTP error response the problem details are exposed as attributes:
    ``status`` (HTTP status), ``code`` (stable snake_case code such as
    ``not_found``), ``title``, ``detail``, ``type`` (problem type URI) and
    ``errors`` (field errors of a validation failure). ``headers`` holds the
    response headers and ``body`` the decoded body (a dict when it was JSON).
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        title: Optional[str] = None,
        detail: Optional[str] = None,
        type: Optional[str] = None,
        errors: Optional[List[FieldError]] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.type = type
        self.errors: List[FieldError] = list(errors or [])
        self.headers: Dict[str, str] = dict(headers or {})
        self.body = body

    def __repr__(self) -> str:
        return "{}(status={!r}, code={!r}, detail={!r})".format(type(self).__name__, self.status, self.code, self.detail)


class ValidationFailed(AgentDirectoryError):
    """400: the request was not valid (``validation_failed``, ``malformed_json``, ``too_many_ids``, ...).

    ``errors`` lists the offending fields as ``FieldError(pointer, detail)``.
    """


class InvalidApiKey(AgentDirectoryError):
    """401 ``invalid_api_key``: the API key sent is unknown or revoked (never silently ignored)."""


class NotFound(AgentDirectoryError):
    """404 ``not_found``: no such agent, submission, claim or route."""


class Conflict(AgentDirectoryError):
    """409: e.g. a submission whose source_url is already listed or pending, or a claim that is not pending."""


class VerificationFailed(AgentDirectoryError):
    """422 ``verification_failed``: the claim token was not found at the verification URL (claim stays pending)."""


class RateLimited(AgentDirectoryError):
    """429 ``rate_limited``, raised once the automatic retries are used up (or the wait would be too long).

    ``retry_after`` is the number of seconds the server asked to wait (``Retry-After``).
    """

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(AgentDirectoryError):
    """5xx: the server failed. The API treats every 5xx as a bug."""


class TransportError(AgentDirectoryError):
    """No HTTP response: connection refused or reset, DNS failure, timeout, or an unreadable response.

    ``timeout`` is True when the request timed out.
    """

    def __init__(self, message: str, *, timeout: bool = False, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.timeout = timeout


_BY_STATUS: Dict[int, Type[AgentDirectoryError]] = {
    400: ValidationFailed,
    401: InvalidApiKey,
    404: NotFound,
    409: Conflict,
    422: VerificationFailed,
    429: RateLimited,
}


def _parse_field_errors(raw: Any) -> List[FieldError]:
    result: List[FieldError] = []
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict):
                result.append(FieldError(pointer=str(item.get("pointer", "")), detail=str(item.get("detail", ""))))
    return result


def error_from_response(
    status: int,
    body: Any,
    headers: Mapping[str, str],
    *,
    method: str = "",
    url: str = "",
    retry_after: Optional[float] = None,
) -> AgentDirectoryError:
    """Builds the exception for an HTTP error response (problem details or anything else)."""
    problem: Dict[str, Any] = body if isinstance(body, dict) else {}
    code = problem.get("code")
    title = problem.get("title")
    detail = problem.get("detail")
    if detail is None and isinstance(body, str) and body.strip():
        detail = body.strip()[:300]
    kwargs: Dict[str, Any] = dict(
        status=status,
        code=str(code) if code is not None else None,
        title=str(title) if title is not None else None,
        detail=str(detail) if detail is not None else None,
        type=str(problem["type"]) if problem.get("type") is not None else None,
        errors=_parse_field_errors(problem.get("errors")),
        headers=headers,
        body=body,
    )
    summary = "{} {}: HTTP {}".format(method, url, status).strip()
    if code:
        summary += " {}".format(code)
    if detail:
        summary += ": {}".format(detail)

    if status == 429:
        return RateLimited(summary, retry_after=retry_after, **kwargs)
    if status >= 500:
        return ServerError(summary, **kwargs)
    cls = _BY_STATUS.get(status, AgentDirectoryError)
    return cls(summary, **kwargs)
