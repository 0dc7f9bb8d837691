"""sync_mirror against a real server: the mirror file stays exactly the listed directory
through creates, edits, unlistings and relistings made by another process (``cli import``)."""

from __future__ import annotations

import base64
import json
import os
import tempfile
import unittest
from typing import Any, Dict, List, Optional

import _support
from _support import ServerProcess

from agent_directory import AgentDirectory, ValidationFailed, read_mirror, sync_mirror

SERVER: Optional[ServerProcess] = None


def setUpModule() -> None:
    global SERVER
    SERVER = ServerProcess(["--no-demo-data", "--rate-limit", "off"]).start()


def tearDownModule() -> None:
    if SERVER is not None:
        SERVER.stop()


def import_records(records: List[Dict[str, Any]]) -> None:
    assert SERVER is not None
    path = os.path.join(SERVER.data_dir, "sync-import.jsonl")
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    _support.run_cli(["import", path], SERVER.data_dir)


def record(index: int, **extra: Any) -> Dict[str, Any]:
    base = {
        "id": "py-sync-{}".format(index),
        "name": "Sync Agent {}".format(index),
        "tagline": "Mirrored by the Python client",
        "source_url": "https://example.com/py-sync/{}".format(index),
    }
    base.update(extra)
    return base


@unittest.skipUnless(_support.cli_has("import"), "needs `npm run cli -- import`")
class SyncMirrorTest(unittest.TestCase):
    def setUp(self) -> None:
        assert SERVER is not None
        self.client = AgentDirectory(SERVER.base_url)
        mirror_dir = tempfile.TemporaryDirectory(prefix="agentdir-pymirror-")
        self.addCleanup(mirror_dir.cleanup)
        self.path = os.path.join(mirror_dir.name, "mirror.json")

    def listed(self) -> Dict[str, Any]:
        # The public list, as raw JSON, every page.
        listed: Dict[str, Any] = {}
        page = 1
        while True:
            body = self.client.request("GET", "/agents", query={"page": page, "limit": 100}).data
            for agent in body["agents"]:
                listed[agent["id"]] = agent
            if len(body["agents"]) < 100:
                return listed
            page += 1

    def assert_exact(self) -> None:
        self.assertEqual(read_mirror(self.path)["agents"], self.listed())

    def test_mirror_stays_exact(self) -> None:
        import_records([record(i) for i in range(12)])
        first = sync_mirror(self.client, self.path, limit=5)
        # The server is shared with the other tests here: count against what it lists.
        self.assertEqual(first.agents, len(self.listed()))
        self.assertGreaterEqual(first.created, 12)
        self.assertGreaterEqual(first.pages, 3)
        self.assert_exact()

        idle = sync_mirror(self.client, self.path)
        self.assertEqual((idle.created, idle.updated, idle.removed, idle.pages, idle.cursor), (0, 0, 0, 1, first.cursor))

        # Another process edits, unlists, relists and creates.
        import_records(
            [
                record(0, name="Sync Agent renamed", capabilities=["renamed"]),
                record(1, listed=False),
                record(2, listed=False),
                record(12),
                record(13, listed=False),
            ]
        )
        second = sync_mirror(self.client, self.path, limit=2)
        self.assertEqual(second.agents, first.agents - 1)
        self.assertGreaterEqual(second.removed, 2)
        self.assert_exact()
        agents = read_mirror(self.path)["agents"]
        self.assertEqual(agents["py-sync-0"]["name"], "Sync Agent renamed")
        self.assertNotIn("py-sync-1", agents)
        self.assertIn("py-sync-12", agents)

        import_records([record(2, listed=True)])
        third = sync_mirror(self.client, self.path)
        self.assertEqual(third.agents, first.agents)
        self.assert_exact()

    def test_a_refused_cursor_rebuilds_the_mirror(self) -> None:
        import_records([record(20)])
        forged = base64.urlsafe_b64encode(b"v1.99999999").decode().rstrip("=")
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump({"format": "agent-directory-mirror/1", "cursor": forged, "synced_at": None, "agents": {"ghost": {}}}, handle)
        result = sync_mirror(self.client, self.path)
        self.assertTrue(result.restarted)
        self.assert_exact()

    def test_changes_rejects_a_bad_cursor(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            self.client.changes(since="not-a-cursor")
        self.assertEqual(caught.exception.code, "invalid_cursor")

    def test_not_a_mirror(self) -> None:
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write('{"hello": 1}')
        with self.assertRaises(ValueError):
            sync_mirror(self.client, self.path)


if __name__ == "__main__":
    unittest.main()
