"""429 handling against a real server whose rate-limit window is 3 s (20 writes per window)."""

from __future__ import annotations

import time
import unittest
import uuid
from typing import Optional

from _support import ServerProcess, SleepRecorder, spy_requests

from agent_directory import AgentDirectory, RateLimited

WINDOW_MS = 3000
SERVER: Optional[ServerProcess] = None


def setUpModule() -> None:
    global SERVER
    SERVER = ServerProcess(["--no-demo-data"], env={"AGENTDIR_RATE_LIMIT_WINDOW_MS": str(WINDOW_MS)}).start()


def tearDownModule() -> None:
    if SERVER is not None:
        SERVER.stop()


def address() -> str:
    return "rl-{}@example.com".format(uuid.uuid4().hex[:12])


def exhaust_writes(min_wait: float = 2.0) -> RateLimited:
    """Spends the write budget of this IP until a 429; returns it with at least `min_wait` s left in the window."""
    assert SERVER is not None
    probe = AgentDirectory(SERVER.base_url, max_retries=0)
    for _ in range(5):
        for _ in range(100):
            try:
                probe.subscribe(address())
            except RateLimited as error:
                if error.retry_after is not None and error.retry_after >= min_wait:
                    return error
                time.sleep((error.retry_after or 1) + 0.05)  # too close to the window's end: wait for a fresh one
                break
    raise AssertionError("could not reach the write limit")


class RateLimitTest(unittest.TestCase):
    def test_a_fresh_window_allows_20_writes_then_429_with_headers(self) -> None:
        assert SERVER is not None
        error = exhaust_writes()
        time.sleep((error.retry_after or 3) + 0.1)  # a fresh window
        probe = AgentDirectory(SERVER.base_url, max_retries=0)
        accepted = 0
        with self.assertRaises(RateLimited) as caught:
            for _ in range(30):
                probe.subscribe(address())
                accepted += 1
        self.assertEqual(accepted, 20)
        limited = caught.exception
        self.assertEqual(limited.status, 429)
        self.assertEqual(limited.code, "rate_limited")
        self.assertIsNotNone(limited.retry_after)
        self.assertTrue(1 <= (limited.retry_after or 0) <= WINDOW_MS / 1000)
        self.assertEqual(limited.headers.get("retry-after"), str(int(limited.retry_after or 0)))
        self.assertEqual(limited.headers.get("ratelimit-policy"), '"writes";q=20;w=3')
        self.assertIn('"writes";r=0;t=', limited.headers.get("ratelimit", ""))

    def test_the_21st_write_waits_retry_after_and_succeeds(self) -> None:
        assert SERVER is not None
        for _ in range(3):
            limited = exhaust_writes()
            sleeps = SleepRecorder(real=True)
            api = AgentDirectory(SERVER.base_url, max_retries=3, sleep=sleeps)
            calls = spy_requests(api)
            subscription = api.subscribe(address())
            if not sleeps.calls:
                continue  # the window ended between the two calls; try again
            self.assertEqual(subscription.status, "confirmation_sent")
            self.assertEqual(len(sleeps.calls), 1)
            self.assertGreaterEqual(sleeps.calls[0], 1)
            self.assertLessEqual(sleeps.calls[0], limited.retry_after or WINDOW_MS / 1000)
            self.assertEqual(len(calls), 2)
            return
        self.fail("the 21st write was never limited")

    def test_gives_up_after_max_retries(self) -> None:
        assert SERVER is not None
        exhaust_writes()
        sleeps = SleepRecorder(real=False)  # no real wait: every retry is still limited
        api = AgentDirectory(SERVER.base_url, max_retries=2, sleep=sleeps)
        with self.assertRaises(RateLimited) as caught:
            api.subscribe(address())
        self.assertEqual(len(sleeps.calls), 2)
        self.assertTrue(all(s >= 1 for s in sleeps.calls))
        self.assertIsNotNone(caught.exception.retry_after)

    def test_does_not_wait_longer_than_max_retry_wait(self) -> None:
        assert SERVER is not None
        exhaust_writes()
        sleeps = SleepRecorder()
        api = AgentDirectory(SERVER.base_url, max_retry_wait=0.5, sleep=sleeps)
        with self.assertRaises(RateLimited):
            api.subscribe(address())
        self.assertEqual(sleeps.calls, [])

    def test_reads_are_not_spent_by_writes(self) -> None:
        assert SERVER is not None
        exhaust_writes()
        self.assertEqual(list(AgentDirectory(SERVER.base_url, max_retries=0).list_agents()), [])


if __name__ == "__main__":
    unittest.main()
