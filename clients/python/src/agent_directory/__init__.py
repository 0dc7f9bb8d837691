"""Python client of the Agent Directory REST API (standard library only).

>>> from agent_directory import AgentDirectory
>>> client = AgentDirectory("http://127.0.0.1:8787/api/v1")
>>> for agent in client.search("code reviewer", limit=5):   # doctest: +SKIP
...     print(agent.name, agent.trust_score)
"""

from ._version import __version__
from .client import DEFAULT_USER_AGENT, MAX_BULK_IDS, AgentDirectory, Response
from .errors import (
    AgentDirectoryError,
    Conflict,
    FieldError,
    InvalidApiKey,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    ValidationFailed,
    VerificationFailed,
)
from .models import (
    AbTest,
    AbVariant,
    Agent,
    BulkResult,
    Claim,
    ClaimCheck,
    ClaimVerification,
    Connection,
    DayCount,
    Health,
    MarketingPost,
    Metrics,
    PublishCounts,
    Rating,
    ReviewTotals,
    Review,
    SearchResult,
    Stats,
    Submission,
    SignUp,
    Subscription,
    parse_time,
)
from .pagination import Page, PageIterator
from .sync import MIRROR_FORMAT, SyncResult, read_mirror, sync_mirror
from .webhooks import SIGNATURE_HEADER, sign_webhook, verify_webhook

__all__ = [
    "__version__",
    "AgentDirectory",
    "Response",
    "MAX_BULK_IDS",
    "DEFAULT_USER_AGENT",
    "AgentDirectoryError",
    "ValidationFailed",
    "InvalidApiKey",
    "NotFound",
    "Conflict",
    "VerificationFailed",
    "RateLimited",
    "ServerError",
    "TransportError",
    "FieldError",
    "Agent",
    "Rating",
    "SearchResult",
    "BulkResult",
    "Review",
    "Submission",
    "Claim",
    "ClaimVerification",
    "ClaimCheck",
    "Connection",
    "SignUp",
    "Subscription",
    "Stats",
    "ReviewTotals",
    "Health",
    "MarketingPost",
    "AbTest",
    "AbVariant",
    "Metrics",
    "PublishCounts",
    "DayCount",
    "Page",
    "PageIterator",
    "parse_time",
    "MIRROR_FORMAT",
    "SyncResult",
    "read_mirror",
    "sync_mirror",
    "SIGNATURE_HEADER",
    "sign_webhook",
    "verify_webhook",
]
