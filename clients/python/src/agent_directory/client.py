"""The Agent Directory REST client (standard library only)."""

from __future__ import annotations

import email.utils
import http.client
import json
import platform
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._version import __version__
from .errors import AgentDirectoryError, TransportError, error_from_response
from .models import (
    AbTest,
    Agent,
    BulkResult,
    Claim,
    Connection,
    Health,
    MarketingPost,
    Metrics,
    Review,
    SearchResult,
    Stats,
    SignUp,
    Submission,
    Subscription,
)
from .pagination import PageIterator

__all__ = ["AgentDirectory", "Response", "MAX_BULK_IDS", "DEFAULT_USER_AGENT"]

#: Ids per ``GET /agents/bulk`` call; :meth:`AgentDirectory.bulk` splits longer lists.
MAX_BULK_IDS = 50

DEFAULT_USER_AGENT = "agent-directory-python/{} (Python {})".format(__version__, platform.python_version())

_API_PREFIX = "/api/v1"
_IDEMPOTENT = frozenset(["GET", "HEAD", "OPTIONS"])
_RATELIMIT_RESET = re.compile(r"(?:^|;)\s*t\s*=\s*(\d+)")

QueryValue = Union[str, int, float, bool, None]


@dataclass
class Response:
    """A decoded HTTP response: status, headers (lower-cased names) and the JSON body (None when empty)."""

    status: int
    headers: Dict[str, str]
    data: Any


def _normalize_base_url(base_url: str) -> str:
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError("base_url is required, e.g. 'https://directory.example.com/api/v1'")
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("base_url must be an absolute http(s) URL, got {!r}".format(base_url))
    path = parts.path.rstrip("/")
    if path == "":
        path = _API_PREFIX  # a bare origin: the API lives under /api/v1
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or value == "":
        raise ValueError("{} must be a non-empty string".format(what))
    return urllib.parse.quote(value, safe="")


def _drop_none(values: Mapping[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _parse_retry_after(headers: Mapping[str, str]) -> Optional[float]:
    """Seconds to wait from ``Retry-After`` (delta-seconds or HTTP date), else from ``RateLimit: ...;t=N``."""
    value = headers.get("retry-after")
    if value:
        value = value.strip()
        if value.isdigit():
            return float(int(value))
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    ratelimit = headers.get("ratelimit")
    if ratelimit:
        match = _RATELIMIT_RESET.search(ratelimit)
        if match:
            return float(int(match.group(1)))
    return None


class AgentDirectory:
    """Client of the Agent Directory REST API.

    ``base_url`` is the API base, e.g. ``https://directory.example.com/api/v1``
    (a bare origin such as ``http://127.0.0.1:8787`` gets ``/api/v1`` appended).
    ``api_key`` (``adk_...``) is sent as ``Authorization: Bearer <key>``; read
    endpoints work without one, with a key they get the higher per-key limit.

    Retries: a 429 is retried after the ``Retry-After`` the server sends, at
    most ``max_retries`` times and only when the wait is at most
    ``max_retry_wait`` seconds; otherwise :class:`~agent_directory.RateLimited`
    is raised. GET requests are also retried (with exponential backoff) on a
    refused or reset connection and on 502/503/504. ``sleep`` is the function
    used to wait (``time.sleep`` by default; tests inject their own).
    ``timeout`` is the per-request socket timeout in seconds; a timeout raises
    :class:`~agent_directory.TransportError` with ``timeout=True`` and is not retried.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        timeout: float = 10.0,
        max_retries: int = 3,
        user_agent: str = DEFAULT_USER_AGENT,
        *,
        max_retry_wait: float = 60.0,
        backoff: float = 0.5,
        sleep: Optional[Callable[[float], Any]] = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.base_url = _normalize_base_url(base_url)
        self.api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_retry_wait = float(max_retry_wait)
        self.backoff = float(backoff)
        self.user_agent = user_agent
        self._sleep: Callable[[float], Any] = sleep if sleep is not None else time.sleep
        self._opener = urllib.request.build_opener()

    def __repr__(self) -> str:
        return "AgentDirectory(base_url={!r}, api_key={})".format(self.base_url, "set" if self.api_key else None)

    # ------------------------------------------------------------------ HTTP

    def _url(self, path: str, query: Optional[Mapping[str, QueryValue]] = None) -> str:
        url = self.base_url + path
        if query:
            pairs = []
            for key, value in query.items():
                if value is None:
                    continue
                if isinstance(value, bool):
                    value = "true" if value else "false"
                pairs.append((key, str(value)))
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        return url

    def _send(self, method: str, url: str, body: Optional[bytes]) -> Response:
        headers = {"Accept": "application/json, application/problem+json", "User-Agent": self.user_agent}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer {}".format(self.api_key)
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    status = int(response.status)
                    raw = response.read()
                    response_headers = {k.lower(): v for k, v in response.headers.items()}
            except urllib.error.HTTPError as error:
                status = int(error.code)
                try:
                    raw = error.read()
                finally:
                    error.close()
                response_headers = {k.lower(): v for k, v in (error.headers or {}).items()}
        except socket.timeout as error:
            raise TransportError("{} {}: timed out after {} s".format(method, url, self.timeout), timeout=True) from error
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, socket.timeout):
                raise TransportError("{} {}: timed out after {} s".format(method, url, self.timeout), timeout=True) from error
            raise TransportError("{} {}: {}".format(method, url, reason)) from error
        except (http.client.HTTPException, OSError) as error:
            raise TransportError("{} {}: {}".format(method, url, error or type(error).__name__)) from error

        data: Any = None
        if raw:
            text = raw.decode("utf-8", errors="replace")
            content_type = response_headers.get("content-type", "")
            if "json" in content_type or text.lstrip()[:1] in ("{", "["):
                try:
                    data = json.loads(text)
                except ValueError:
                    if status < 400:
                        raise TransportError(
                            "{} {}: the response is not valid JSON".format(method, url), status=status, headers=response_headers
                        ) from None
                    data = text
            else:
                data = text
        return Response(status=status, headers=response_headers, data=data)

    def _backoff_delay(self, attempt: int) -> float:
        return float(min(self.max_retry_wait, self.backoff * 2.0**attempt))

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, QueryValue]] = None,
        json_body: Any = None,
    ) -> Response:
        """Sends one API request (``path`` relative to ``base_url``, e.g. ``/agents``) with retries.

        Returns the decoded :class:`Response` for a 2xx/3xx status; raises the
        matching :class:`~agent_directory.AgentDirectoryError` subclass otherwise.
        """
        method = method.upper()
        url = self._url(path, query)
        body = None if json_body is None else json.dumps(json_body, separators=(",", ":")).encode("utf-8")
        attempt = 0
        while True:
            try:
                response = self._send(method, url, body)
            except TransportError as error:
                if method in _IDEMPOTENT and not error.timeout and error.status is None and attempt < self.max_retries:
                    self._sleep(self._backoff_delay(attempt))
                    attempt += 1
                    continue
                raise
            if response.status < 400:
                return response

            retry_after = _parse_retry_after(response.headers)
            retryable = response.status == 429 or (method in _IDEMPOTENT and response.status in (502, 503, 504))
            if retryable and attempt < self.max_retries:
                delay = retry_after if retry_after is not None else self._backoff_delay(attempt)
                if delay <= self.max_retry_wait:
                    self._sleep(delay)
                    attempt += 1
                    continue
            raise error_from_response(
                response.status, response.data, response.headers, method=method, url=url, retry_after=retry_after
            )

    def _get(self, path: str, query: Optional[Mapping[str, QueryValue]] = None) -> Any:
        return self.request("GET", path, query=query).data

    def _post(self, path: str, body: Any) -> Response:
        return self.request("POST", path, json_body=body)

    def _object(self, data: Any, what: str) -> Mapping[str, Any]:
        if not isinstance(data, Mapping):
            raise AgentDirectoryError("unexpected response for {}: expected a JSON object".format(what), body=data)
        return data

    def _pages(
        self,
        path: str,
        items_key: str,
        parse: Callable[[Mapping[str, Any]], Any],
        query: Mapping[str, QueryValue],
        page_size: int,
    ) -> PageIterator[Any]:
        def fetch(page: int, limit: int) -> Mapping[str, Any]:
            params: Dict[str, QueryValue] = dict(query)
            params["page"] = page
            params["limit"] = limit
            return self._object(self._get(path, params), path)

        return PageIterator(fetch, items_key, parse, page_size=page_size)

    # ------------------------------------------------------------- directory

    def health(self) -> Health:
        """``GET /health``: status, number of indexed agents and the service version."""
        return Health.from_dict(self._object(self._get("/health"), "health"))

    def stats(self) -> Stats:
        """``GET /stats``: agent counts (total, verified, by type, by category) and review totals."""
        return Stats.from_dict(self._object(self._get("/stats"), "stats"))

    def search(
        self,
        query: str,
        limit: int = 20,
        type: Optional[str] = None,
        min_trust: Optional[float] = None,
        capabilities: Optional[Union[str, Sequence[str]]] = None,
    ) -> SearchResult:
        """Typo-tolerant search on name, description, capabilities and author, best match first.

        Without filters this is ``GET /agents/search?q=...&limit=...`` (cacheable);
        with any of ``type``, ``min_trust`` or ``capabilities`` it is
        ``POST /agents/search`` with a JSON body, so capability names travel as a
        list and need no escaping. ``capabilities`` are all required
        (a string is one capability).
        """
        if isinstance(capabilities, str):
            capabilities = [capabilities]
        caps = list(capabilities) if capabilities else None
        if type is None and min_trust is None and not caps:
            data = self._get("/agents/search", {"q": query, "limit": limit})
        else:
            body = _drop_none({"query": query, "limit": limit, "type": type, "min_trust": min_trust, "capabilities": caps})
            data = self._post("/agents/search", body).data
        return SearchResult.from_dict(self._object(data, "search"))

    def get(self, agent_id: str) -> Agent:
        """``GET /agents/{id}``: one agent profile; :class:`~agent_directory.NotFound` when unknown."""
        return Agent.from_dict(self._object(self._get("/agents/" + _segment(agent_id, "agent_id")), "agent"))

    def list_agents(
        self,
        type: Optional[str] = None,
        sort: Optional[str] = None,
        order: Optional[str] = None,
        page_size: int = 20,
    ) -> PageIterator[Agent]:
        """Every listed agent (``GET /agents``), fetched lazily page by page until ``total``.

        ``sort`` is one of ``trust_score`` (default), ``name``, ``rating``,
        ``created_at``, ``updated_at``; ``order`` is ``asc`` or ``desc``.
        """
        return self._pages(
            "/agents", "agents", Agent.from_dict, {"type": type, "sort": sort, "order": order}, page_size
        )

    def changes(self, since: Optional[str] = None, limit: int = 100) -> Dict[str, Any]:
        """``GET /agents/changes``: agents changed after the cursor ``since`` (from the start without it).

        Returns the JSON as a dict: ``{"changes": [{"agent_id", "change", "agent"?, "cursor"}], "next_cursor"}``,
        oldest first; ``created``/``updated`` carry the profile, ``removed`` does not. Poll again with
        ``next_cursor``; :func:`~agent_directory.sync_mirror` keeps a local file exact with it.
        """
        data = self._object(self._get("/agents/changes", {"since": since, "limit": limit}), "changes")
        return dict(data)

    def bulk(self, ids: Iterable[str]) -> BulkResult:
        """Fetches many agents by id (``GET /agents/bulk``), 50 ids per call.

        Longer lists are split into several calls. The result keeps the
        request order: ``agents`` are the found profiles, ``missing`` the ids
        that were not found. Repeated ids are fetched and returned once.
        """
        unique: List[str] = []
        seen = set()
        for agent_id in ids:
            if not isinstance(agent_id, str) or not agent_id:
                raise ValueError("ids must be non-empty strings")
            if agent_id not in seen:
                seen.add(agent_id)
                unique.append(agent_id)
        found: Dict[str, Agent] = {}
        for start in range(0, len(unique), MAX_BULK_IDS):
            chunk = unique[start : start + MAX_BULK_IDS]
            data = self._object(self._get("/agents/bulk", {"ids": ",".join(chunk)}), "bulk")
            for item in data.get("agents") or []:
                if isinstance(item, Mapping):
                    agent = Agent.from_dict(item)
                    found[agent.id] = agent
        agents = [found[agent_id] for agent_id in unique if agent_id in found]
        missing = [agent_id for agent_id in unique if agent_id not in found]
        return BulkResult(agents=agents, missing=missing)

    def connections(self, agent_id: str, limit: int = 10) -> List[Connection]:
        """``GET /agents/{id}/connections``: related agents (shared categories, capabilities, author), best first."""
        data = self._object(
            self._get("/agents/{}/connections".format(_segment(agent_id, "agent_id")), {"limit": limit}), "connections"
        )
        return [Connection.from_dict(item) for item in data.get("connections") or [] if isinstance(item, Mapping)]

    # --------------------------------------------------------------- reviews

    def reviews(self, agent_id: str, page_size: int = 20) -> PageIterator[Review]:
        """Every review of an agent, newest first, fetched page by page."""
        return self._pages(
            "/agents/{}/reviews".format(_segment(agent_id, "agent_id")), "reviews", Review.from_dict, {}, page_size
        )

    def add_review(
        self,
        agent_id: str,
        rating: int,
        comment: Optional[str] = None,
        reviewer_name: Optional[str] = None,
    ) -> Review:
        """``POST /agents/{id}/reviews``: a whole-star rating from 1 to 5, optional comment and name."""
        body = _drop_none({"rating": rating, "comment": comment, "reviewer_name": reviewer_name})
        response = self._post("/agents/{}/reviews".format(_segment(agent_id, "agent_id")), body)
        return Review.from_dict(self._object(response.data, "review"))

    # ----------------------------------------------------------- submissions

    def register(self, name: str, tagline: str, source_url: str, **extra: Any) -> Submission:
        """Submits an agent for review (``POST /submit``); it is ``pending`` until a moderator decides.

        ``extra`` may carry ``description``, ``author``, ``capabilities``,
        ``categories``, ``type`` and ``contact_email``. A source_url that is
        already listed or pending raises :class:`~agent_directory.Conflict`.
        """
        body: Dict[str, Any] = {"name": name, "tagline": tagline, "source_url": source_url}
        body.update(_drop_none(extra))
        return Submission.from_dict(self._object(self._post("/submit", body).data, "submission"))

    def submission(self, submission_id: str) -> Submission:
        """``GET /submissions/{id}``: the state of a submission."""
        data = self._get("/submissions/" + _segment(submission_id, "submission_id"))
        return Submission.from_dict(self._object(data, "submission"))

    # ---------------------------------------------------------------- claims

    def claim(self, agent_id: str, claimant_name: str, claimant_email: str) -> Claim:
        """``POST /claims``: claims a listing. The result's ``verification`` says where to publish which token."""
        body = {"agent_id": agent_id, "claimant_name": claimant_name, "claimant_email": claimant_email}
        return Claim.from_dict(self._object(self._post("/claims", body).data, "claim"))

    def get_claim(self, claim_id: str) -> Claim:
        """``GET /claims/{id}``: status and last check of a claim (never the token)."""
        return Claim.from_dict(self._object(self._get("/claims/" + _segment(claim_id, "claim_id")), "claim"))

    def verify_claim(self, claim_id: str) -> Claim:
        """``POST /claims/{id}/verify``: checks the token at the verification URL.

        Returns the claim with ``status == "verified"``; raises
        :class:`~agent_directory.VerificationFailed` (422) when the token was not
        found and :class:`~agent_directory.Conflict` (409) when the claim is not pending.
        """
        response = self._post("/claims/{}/verify".format(_segment(claim_id, "claim_id")), {})
        return Claim.from_dict(self._object(response.data, "claim"))

    # ------------------------------------------------------------ newsletter

    def subscribe(self, email: str) -> SignUp:
        """``POST /newsletter``: double opt-in.

        The server mails the address a confirmation link and answers 202 with the same
        :class:`SignUp` (``status == "confirmation_sent"``) for every valid address, new or
        already subscribed; the address is on the list once its owner follows the link.
        """
        response = self._post("/newsletter", {"email": email})
        return SignUp.from_dict(self._object(response.data, "sign-up"))

    def confirm_subscription(self, token: str) -> Subscription:
        """``POST /newsletter/confirm``: the token of the confirmation link (single-use, 48 hours).

        Raises :class:`~agent_directory.ValidationFailed` (400 ``invalid_token``) for an
        unknown, expired or used token.
        """
        response = self._post("/newsletter/confirm", {"token": token})
        return Subscription.from_dict(self._object(response.data, "subscription"))

    def unsubscribe(self, token: str) -> Subscription:
        """``POST /newsletter/unsubscribe``: the token of the unsubscribe link every newsletter mail carries (works any number of times)."""
        response = self._post("/newsletter/unsubscribe", {"token": token})
        return Subscription.from_dict(self._object(response.data, "subscription"))

    # ------------------------------------------------------------- marketing

    def marketing_posts(
        self, status: Optional[str] = None, tone: Optional[str] = None, page_size: int = 20
    ) -> PageIterator[MarketingPost]:
        """Generated marketing posts (``GET /marketing/posts``), optionally filtered, fetched page by page."""
        return self._pages(
            "/marketing/posts", "posts", MarketingPost.from_dict, {"status": status, "tone": tone}, page_size
        )

    def ab_tests(self) -> List[AbTest]:
        """Every A/B test result (``GET /marketing/ab-tests``), with significance."""
        return list(self._pages("/marketing/ab-tests", "ab_tests", AbTest.from_dict, {}, 100))

    def marketing_metrics(self) -> Metrics:
        """``GET /marketing/metrics``: tone distribution and publish counts."""
        return Metrics.from_dict(self._object(self._get("/marketing/metrics"), "metrics"))
