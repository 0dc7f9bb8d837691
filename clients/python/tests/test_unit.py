"""Client behaviour against scripted HTTP responses: headers, retries, error mapping (no Agent Directory server)."""

from __future__ import annotations

import json
import unittest
from email.utils import formatdate
import time

from _support import ScriptedServer, SleepRecorder

from agent_directory import (
    AgentDirectory,
    AgentDirectoryError,
    Conflict,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    ValidationFailed,
    VerificationFailed,
    parse_time,
)
from agent_directory.client import _normalize_base_url, _parse_retry_after

PROBLEM = {"Content-Type": "application/problem+json"}
JSON = {"Content-Type": "application/json"}


def problem(status: int, code: str, **extra: object) -> bytes:
    body = {"type": "https://agent-directory.dev/problems/" + code, "title": code, "status": status, "detail": "d", "code": code}
    body.update(extra)
    return json.dumps(body).encode()


HEALTH = json.dumps({"status": "ok", "agents_indexed": 3, "version": "1.2.3"}).encode()


class BaseUrlTest(unittest.TestCase):
    def test_normalization(self) -> None:
        self.assertEqual(_normalize_base_url("http://h:1"), "http://h:1/api/v1")
        self.assertEqual(_normalize_base_url("http://h:1/"), "http://h:1/api/v1")
        self.assertEqual(_normalize_base_url("https://h/api/v1/"), "https://h/api/v1")
        self.assertEqual(_normalize_base_url("https://h/dir/api/v1"), "https://h/dir/api/v1")
        for bad in ["", "h:1", "ftp://h/api/v1", "/api/v1"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                _normalize_base_url(bad)


class RetryAfterTest(unittest.TestCase):
    def test_forms(self) -> None:
        self.assertEqual(_parse_retry_after({"retry-after": "41"}), 41.0)
        self.assertEqual(_parse_retry_after({"ratelimit": '"writes";r=0;t=7'}), 7.0)
        self.assertIsNone(_parse_retry_after({}))
        later = _parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
        assert later is not None
        self.assertTrue(28 <= later <= 31)
        self.assertEqual(_parse_retry_after({"retry-after": formatdate(time.time() - 30, usegmt=True)}), 0.0)

    def test_parse_time(self) -> None:
        parsed = parse_time("2025-01-02T03:04:05.123Z")
        assert parsed is not None
        self.assertEqual((parsed.year, parsed.microsecond, parsed.utcoffset().total_seconds()), (2025, 123000, 0))  # type: ignore[union-attr]
        self.assertIsNone(parse_time(None))


class ScriptedTest(unittest.TestCase):
    def serve(self, *script):  # type: ignore[no-untyped-def]
        server = ScriptedServer(script)
        self.addCleanup(server.stop)
        return server

    def test_headers_sent(self) -> None:
        server = self.serve((202, JSON, b'{"email":"a@b.co","status":"confirmation_sent"}'))
        api = AgentDirectory(server.base_url, api_key="adk_secret", user_agent="ua-test/1")
        sign_up = api.subscribe("a@b.co")
        self.assertEqual(sign_up.status, "confirmation_sent")
        method, path, headers, body = server.requests[0]
        self.assertEqual((method, path), ("POST", "/api/v1/newsletter"))
        self.assertEqual(headers["authorization"], "Bearer adk_secret")
        self.assertEqual(headers["user-agent"], "ua-test/1")
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(json.loads(body), {"email": "a@b.co"})
        self.assertIn("api_key=set", repr(api))
        self.assertNotIn("adk_secret", repr(api))

    def test_429_waits_retry_after_then_succeeds(self) -> None:
        server = self.serve(
            (429, dict(PROBLEM, **{"Retry-After": "2"}), problem(429, "rate_limited")),
            (429, dict(PROBLEM, **{"RateLimit": '"writes";r=0;t=1'}), problem(429, "rate_limited")),
            (201, JSON, b'{"id":"r1","agent_id":"a","rating":5,"comment":null,"reviewer_name":null,"created_at":"x"}'),
        )
        sleeps = SleepRecorder()
        review = AgentDirectory(server.base_url, sleep=sleeps).add_review("a", 5)
        self.assertEqual(review.id, "r1")
        self.assertEqual(sleeps.calls, [2.0, 1.0])
        self.assertEqual(len(server.requests), 3)

    def test_429_over_max_wait_raises_at_once(self) -> None:
        server = self.serve((429, dict(PROBLEM, **{"Retry-After": "120"}), problem(429, "rate_limited")))
        sleeps = SleepRecorder()
        with self.assertRaises(RateLimited) as caught:
            AgentDirectory(server.base_url, sleep=sleeps).health()
        self.assertEqual(caught.exception.retry_after, 120.0)
        self.assertEqual(sleeps.calls, [])

    def test_get_retries_503_but_post_does_not(self) -> None:
        server = self.serve((503, PROBLEM, problem(503, "unavailable")), (200, JSON, HEALTH))
        sleeps = SleepRecorder()
        self.assertEqual(AgentDirectory(server.base_url, sleep=sleeps).health().version, "1.2.3")
        self.assertEqual(sleeps.calls, [0.5])
        server = self.serve((503, PROBLEM, problem(503, "unavailable")))
        with self.assertRaises(ServerError) as caught:
            AgentDirectory(server.base_url, sleep=sleeps).subscribe("a@b.co")
        self.assertEqual(caught.exception.status, 503)

    def test_error_mapping(self) -> None:
        cases = [
            (400, ValidationFailed),
            (404, NotFound),
            (409, Conflict),
            (422, VerificationFailed),
            (500, ServerError),
            (418, AgentDirectoryError),
        ]
        for status, cls in cases:
            with self.subTest(status=status):
                errors = [{"pointer": "/rating", "detail": "too big"}] if status == 400 else None
                server = self.serve((status, PROBLEM, problem(status, "c{}".format(status), **({"errors": errors} if errors else {}))))
                with self.assertRaises(cls) as caught:
                    AgentDirectory(server.base_url, max_retries=0).health()
                self.assertEqual(caught.exception.status, status)
                self.assertEqual(caught.exception.code, "c{}".format(status))
                if errors:
                    self.assertEqual(caught.exception.errors[0].pointer, "/rating")

    def test_non_json_error_body(self) -> None:
        server = self.serve((502, {"Content-Type": "text/html"}, b"<h1>Bad gateway</h1>"))
        with self.assertRaises(ServerError) as caught:
            AgentDirectory(server.base_url, max_retries=0).health()
        self.assertIsNone(caught.exception.code)
        self.assertIn("Bad gateway", caught.exception.detail or "")

    def test_invalid_json_success_is_a_transport_error(self) -> None:
        server = self.serve((200, JSON, b"{not json"))
        with self.assertRaises(TransportError) as caught:
            AgentDirectory(server.base_url).health()
        self.assertEqual(caught.exception.status, 200)

    def test_forward_compatible_models(self) -> None:
        body = {"status": "ok", "agents_indexed": 1, "version": "2.0.0", "region": "eu"}
        server = self.serve((200, JSON, json.dumps(body).encode()))
        health = AgentDirectory(server.base_url).health()
        self.assertEqual(health.raw["region"], "eu")

    def test_ab_tests_and_pages_stop_at_total(self) -> None:
        page1 = {"ab_tests": [{"id": "t1", "name": "n", "status": "running", "variants": []}], "page": 1, "limit": 1, "total": 1}
        server = self.serve((200, JSON, json.dumps(page1).encode()))
        tests = AgentDirectory(server.base_url).ab_tests()
        self.assertEqual([t.id for t in tests], ["t1"])
        self.assertEqual(len(server.requests), 1)


if __name__ == "__main__":
    unittest.main()
