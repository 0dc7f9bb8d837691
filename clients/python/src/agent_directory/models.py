"""Typed results of the Agent Directory API.

Every model is a dataclass built with ``from_dict`` from the JSON the API
returns. Field names are the API's own (snake_case). Times are kept as the
ISO 8601 UTC strings the API sends (``2025-01-01T12:00:00.000Z``); use
:func:`parse_time` to get an aware :class:`datetime.datetime`. Fields the
server adds in later versions are not lost: each model keeps the whole JSON
object in ``raw``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterator, List, Mapping, Optional

__all__ = [
    "parse_time",
    "Rating",
    "Agent",
    "SearchResult",
    "BulkResult",
    "Review",
    "Submission",
    "ClaimVerification",
    "ClaimCheck",
    "Claim",
    "Connection",
    "SignUp",
    "Subscription",
    "ReviewTotals",
    "Stats",
    "Health",
    "MarketingPost",
    "AbVariant",
    "AbTest",
    "DayCount",
    "PublishCounts",
    "Metrics",
]


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """Parses an API timestamp (ISO 8601, UTC, ending in ``Z``) into an aware datetime; None stays None."""
    if value is None:
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(_trim_fraction(text))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _trim_fraction(text: str) -> str:
    # Python 3.9/3.10 fromisoformat accepts only 3 or 6 fractional digits.
    if "." not in text:
        return text
    head, _, rest = text.partition(".")
    digits = ""
    while rest and rest[0].isdigit():
        digits, rest = digits + rest[0], rest[1:]
    if not digits:
        return text
    digits = (digits + "000000")[:6]
    return "{}.{}{}".format(head, digits, rest)


def _str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _opt_str(data: Mapping[str, Any], key: str) -> Optional[str]:
    value = data.get(key)
    return None if value is None else str(value)


def _int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    return default if value is None else int(value)


def _float(data: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    value = data.get(key)
    return default if value is None else float(value)


def _opt_float(data: Mapping[str, Any], key: str) -> Optional[float]:
    value = data.get(key)
    return None if value is None else float(value)


def _strs(data: Mapping[str, Any], key: str) -> List[str]:
    value = data.get(key)
    return [str(item) for item in value] if isinstance(value, list) else []


def _counts(data: Mapping[str, Any], key: str) -> Dict[str, int]:
    value = data.get(key)
    return {str(k): int(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _obj(data: Mapping[str, Any], key: str) -> Dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


@dataclass
class Rating:
    """Rating summary of an agent: mean of its reviews (None without reviews) and their number."""

    average: Optional[float]
    count: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Rating":
        return cls(average=_opt_float(data, "average"), count=_int(data, "count"))


@dataclass
class Agent:
    """An agent profile. ``score`` is set only on search hits (relevance, higher is better)."""

    id: str
    name: str
    tagline: str
    description: str
    author: str
    capabilities: List[str]
    categories: List[str]
    type: str
    trust_score: float
    source_url: str
    verified: bool
    rating: Rating
    created_at: str
    updated_at: str
    score: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Agent":
        return cls(
            id=_str(data, "id"),
            name=_str(data, "name"),
            tagline=_str(data, "tagline"),
            description=_str(data, "description"),
            author=_str(data, "author"),
            capabilities=_strs(data, "capabilities"),
            categories=_strs(data, "categories"),
            type=_str(data, "type"),
            trust_score=_float(data, "trust_score"),
            source_url=_str(data, "source_url"),
            verified=bool(data.get("verified", False)),
            rating=Rating.from_dict(_obj(data, "rating")),
            created_at=_str(data, "created_at"),
            updated_at=_str(data, "updated_at"),
            score=_opt_float(data, "score"),
            raw=dict(data),
        )


@dataclass
class SearchResult:
    """Search hits, best first. ``total`` counts every match; ``agents`` holds at most ``limit`` of them."""

    query: str
    agents: List[Agent]
    total: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __iter__(self) -> Iterator[Agent]:
        return iter(self.agents)

    def __len__(self) -> int:
        return len(self.agents)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchResult":
        agents = [Agent.from_dict(item) for item in data.get("agents") or []]
        return cls(query=_str(data, "query"), agents=agents, total=_int(data, "total", len(agents)), raw=dict(data))


@dataclass
class BulkResult:
    """Result of :meth:`AgentDirectory.bulk`: found agents in request order and the ids that were not found."""

    agents: List[Agent]
    missing: List[str]


@dataclass
class Review:
    id: str
    agent_id: str
    rating: int
    comment: Optional[str]
    reviewer_name: Optional[str]
    created_at: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Review":
        return cls(
            id=_str(data, "id"),
            agent_id=_str(data, "agent_id"),
            rating=_int(data, "rating"),
            comment=_opt_str(data, "comment"),
            reviewer_name=_opt_str(data, "reviewer_name"),
            created_at=_str(data, "created_at"),
            raw=dict(data),
        )


@dataclass
class Submission:
    """An agent sent for review. ``status`` is ``pending``, ``approved`` (then ``agent_id`` is set) or ``rejected`` (then ``reason``)."""

    id: str
    status: str
    name: str
    tagline: str
    source_url: str
    description: str = ""
    author: str = ""
    capabilities: List[str] = field(default_factory=list)
    categories: List[str] = field(default_factory=list)
    type: str = ""
    agent_id: Optional[str] = None
    reason: Optional[str] = None
    created_at: str = ""
    updated_at: str = ""
    decided_at: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Submission":
        return cls(
            id=_str(data, "id"),
            status=_str(data, "status"),
            name=_str(data, "name"),
            tagline=_str(data, "tagline"),
            source_url=_str(data, "source_url"),
            description=_str(data, "description"),
            author=_str(data, "author"),
            capabilities=_strs(data, "capabilities"),
            categories=_strs(data, "categories"),
            type=_str(data, "type"),
            agent_id=_opt_str(data, "agent_id"),
            reason=_opt_str(data, "reason"),
            created_at=_str(data, "created_at"),
            updated_at=_str(data, "updated_at"),
            decided_at=_opt_str(data, "decided_at"),
            raw=dict(data),
        )


@dataclass
class ClaimVerification:
    """How to prove a claim: serve a file at ``url`` whose body contains ``token``.

    ``token`` and ``instructions`` are present only in the response of :meth:`AgentDirectory.claim`.
    """

    method: str
    url: str
    token: Optional[str] = None
    instructions: Optional[str] = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ClaimVerification":
        return cls(
            method=_str(data, "method"),
            url=_str(data, "url"),
            token=_opt_str(data, "token"),
            instructions=_opt_str(data, "instructions"),
        )


@dataclass
class ClaimCheck:
    """The result of the last fetch of the verification URL."""

    checked_at: str
    ok: bool
    http_status: Optional[int]
    detail: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ClaimCheck":
        status = data.get("http_status")
        return cls(
            checked_at=_str(data, "checked_at"),
            ok=bool(data.get("ok", False)),
            http_status=None if status is None else int(status),
            detail=_str(data, "detail"),
        )


@dataclass
class Claim:
    """An ownership claim: ``pending`` until verified (``verified``) or rejected (``rejected``)."""

    id: str
    agent_id: str
    status: str
    verification: ClaimVerification
    verified_by: Optional[str] = None
    reason: Optional[str] = None
    last_check: Optional[ClaimCheck] = None
    claimant_name: Optional[str] = None
    claimant_email: Optional[str] = None
    created_at: str = ""
    updated_at: str = ""
    decided_at: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Claim":
        last_check = data.get("last_check")
        return cls(
            id=_str(data, "id"),
            agent_id=_str(data, "agent_id"),
            status=_str(data, "status"),
            verification=ClaimVerification.from_dict(_obj(data, "verification")),
            verified_by=_opt_str(data, "verified_by"),
            reason=_opt_str(data, "reason"),
            last_check=ClaimCheck.from_dict(last_check) if isinstance(last_check, dict) else None,
            claimant_name=_opt_str(data, "claimant_name"),
            claimant_email=_opt_str(data, "claimant_email"),
            created_at=_str(data, "created_at"),
            updated_at=_str(data, "updated_at"),
            decided_at=_opt_str(data, "decided_at"),
            raw=dict(data),
        )


@dataclass
class Connection:
    """A related agent and why it is related."""

    agent: Agent
    score: float
    shared_categories: List[str]
    shared_capabilities: List[str]
    same_author: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Connection":
        return cls(
            agent=Agent.from_dict(_obj(data, "agent")),
            score=_float(data, "score"),
            shared_categories=_strs(data, "shared_categories"),
            shared_capabilities=_strs(data, "shared_capabilities"),
            same_author=bool(data.get("same_author", False)),
            raw=dict(data),
        )


@dataclass
class SignUp:
    """The answer to a newsletter sign-up: the same for every valid address.

    ``status`` is ``"confirmation_sent"`` and ``email`` echoes the address as sent,
    so the answer tells nobody whether the address was already on the list.
    """

    email: str
    status: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SignUp":
        return cls(email=_str(data, "email"), status=_str(data, "status"), raw=dict(data))


@dataclass
class Subscription:
    """A newsletter address after a confirmation or unsubscribe link: ``status`` is ``"subscribed"`` or ``"unsubscribed"``."""

    email: str
    status: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Subscription":
        return cls(email=_str(data, "email"), status=_str(data, "status"), raw=dict(data))


@dataclass
class ReviewTotals:
    count: int
    average_rating: Optional[float]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ReviewTotals":
        return cls(count=_int(data, "count"), average_rating=_opt_float(data, "average_rating"))


@dataclass
class Stats:
    """Directory statistics."""

    total_agents: int
    verified_agents: int
    by_type: Dict[str, int]
    by_category: Dict[str, int]
    reviews: ReviewTotals
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Stats":
        return cls(
            total_agents=_int(data, "total_agents"),
            verified_agents=_int(data, "verified_agents"),
            by_type=_counts(data, "by_type"),
            by_category=_counts(data, "by_category"),
            reviews=ReviewTotals.from_dict(_obj(data, "reviews")),
            raw=dict(data),
        )


@dataclass
class Health:
    status: str
    agents_indexed: int
    version: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Health":
        return cls(
            status=_str(data, "status"),
            agents_indexed=_int(data, "agents_indexed"),
            version=_str(data, "version"),
            raw=dict(data),
        )


@dataclass
class MarketingPost:
    id: str
    title: str
    body: str
    tone: str
    status: str
    channel: str
    created_at: str
    agent_id: Optional[str] = None
    published_at: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "MarketingPost":
        return cls(
            id=_str(data, "id"),
            title=_str(data, "title"),
            body=_str(data, "body"),
            tone=_str(data, "tone"),
            status=_str(data, "status"),
            channel=_str(data, "channel"),
            created_at=_str(data, "created_at"),
            agent_id=_opt_str(data, "agent_id"),
            published_at=_opt_str(data, "published_at"),
            raw=dict(data),
        )


@dataclass
class AbVariant:
    id: str
    label: str
    post_id: str
    impressions: int
    conversions: int
    rate: float
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AbVariant":
        return cls(
            id=_str(data, "id"),
            label=_str(data, "label"),
            post_id=_str(data, "post_id"),
            impressions=_int(data, "impressions"),
            conversions=_int(data, "conversions"),
            rate=_float(data, "rate"),
            raw=dict(data),
        )


@dataclass
class AbTest:
    """An A/B test. ``winner`` (a variant label) and ``p_value`` are present once the results say so."""

    id: str
    name: str
    status: str
    variants: List[AbVariant]
    winner: Optional[str] = None
    p_value: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AbTest":
        return cls(
            id=_str(data, "id"),
            name=_str(data, "name"),
            status=_str(data, "status"),
            variants=[AbVariant.from_dict(v) for v in data.get("variants") or [] if isinstance(v, dict)],
            winner=_opt_str(data, "winner"),
            p_value=_opt_float(data, "p_value"),
            raw=dict(data),
        )


@dataclass
class DayCount:
    date: str
    count: int


@dataclass
class PublishCounts:
    total: int
    by_status: Dict[str, int]
    by_day: List[DayCount]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PublishCounts":
        days = [DayCount(date=_str(d, "date"), count=_int(d, "count")) for d in data.get("by_day") or [] if isinstance(d, dict)]
        return cls(total=_int(data, "total"), by_status=_counts(data, "by_status"), by_day=days)


@dataclass
class Metrics:
    """Marketing metrics: posts per tone and publish counts."""

    tone_distribution: Dict[str, int]
    publish_counts: PublishCounts
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Metrics":
        return cls(
            tone_distribution=_counts(data, "tone_distribution"),
            publish_counts=PublishCounts.from_dict(_obj(data, "publish_counts")),
            raw=dict(data),
        )
