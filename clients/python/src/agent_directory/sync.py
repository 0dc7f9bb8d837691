"""A local mirror of the directory, kept exact with ``GET /agents/changes``.

>>> from agent_directory import AgentDirectory, sync_mirror
>>> result = sync_mirror(AgentDirectory("http://127.0.0.1:8787/api/v1"), "agents-mirror.json")  # doctest: +SKIP
>>> result.agents, result.created, result.updated, result.removed  # doctest: +SKIP
(412, 412, 0, 0)

The file (JSON, the same format as the TypeScript client's ``syncMirror``) holds the listed
agents by id and the feed cursor. Each call reads it, applies every change after its cursor,
oldest first, and writes it back to a temporary file renamed over the old one, so a crash
leaves the previous mirror, which the next call brings up to date again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from .errors import AgentDirectoryError

if TYPE_CHECKING:  # pragma: no cover
    from .client import AgentDirectory

MIRROR_FORMAT = "agent-directory-mirror/1"


@dataclass(frozen=True)
class SyncResult:
    """What one :func:`sync_mirror` call did."""

    agents: int
    created: int
    updated: int
    removed: int
    pages: int
    cursor: str
    restarted: bool
    """True when the server refused the stored cursor (e.g. its database was restored) and the mirror was rebuilt."""


def read_mirror(path: str) -> Dict[str, Any]:
    """The mirror in ``path`` as a dict (``format``, ``cursor``, ``synced_at``, ``agents``), empty when missing."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            mirror = json.load(handle)
    except FileNotFoundError:
        return {"format": MIRROR_FORMAT, "cursor": None, "synced_at": None, "agents": {}}
    if not isinstance(mirror, dict) or mirror.get("format") != MIRROR_FORMAT or not isinstance(mirror.get("agents"), dict):
        raise ValueError("{} is not an agent directory mirror ({})".format(path, MIRROR_FORMAT))
    return mirror


def _write_mirror(path: str, mirror: Dict[str, Any]) -> None:
    directory, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(directory, ".{}.{}.tmp".format(name, os.getpid()))
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(mirror, handle, ensure_ascii=False, separators=(",", ":"))
    os.replace(temporary, path)


def sync_mirror(
    client: "AgentDirectory",
    path: str,
    limit: int = 1000,
    on_page: Optional[Callable[[int, int], None]] = None,
) -> SyncResult:
    """Brings the mirror in ``path`` up to date with the directory (creating it on first use).

    ``limit`` is the number of changes per request (1-1000); ``on_page(changes, agents)`` is
    called after each page is applied.
    """
    mirror = read_mirror(path)
    agents: Dict[str, Any] = dict(mirror["agents"])
    cursor: Optional[str] = mirror.get("cursor")
    counts = {"created": 0, "updated": 0, "removed": 0}
    pages = 0
    restarted = False
    while True:
        try:
            page = client.changes(since=cursor, limit=limit)
        except AgentDirectoryError as error:
            # A cursor the server no longer knows: what the mirror holds can't be trusted, so rebuild it.
            if error.code == "invalid_cursor" and cursor is not None and not restarted:
                agents.clear()
                cursor = None
                restarted = True
                continue
            raise
        pages += 1
        changes = page.get("changes") or []
        for change in changes:
            agent = change.get("agent")
            if change["change"] == "removed" or agent is None:
                agents.pop(change["agent_id"], None)
            else:
                agents[change["agent_id"]] = agent
            if change["change"] in counts:
                counts[change["change"]] += 1
        cursor = str(page["next_cursor"])
        if on_page is not None:
            on_page(len(changes), len(agents))
        if len(changes) < limit:
            break
    synced_at = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    _write_mirror(path, {"format": MIRROR_FORMAT, "cursor": cursor, "synced_at": synced_at, "agents": agents})
    return SyncResult(
        agents=len(agents),
        created=counts["created"],
        updated=counts["updated"],
        removed=counts["removed"],
        pages=pages,
        cursor=cursor,
        restarted=restarted,
    )
