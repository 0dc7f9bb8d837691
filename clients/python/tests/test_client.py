"""The Python client against a real server (demo directory, rate limits off)."""

from __future__ import annotations

import email
import itertools
import json
import math
import re
import time
import unittest
import uuid
from pathlib import Path
from typing import List, Optional

import _support
from _support import LocalHttpServer, ServerProcess, SilentServer, SleepRecorder, free_port, spy_requests

from agent_directory import (
    Agent,
    AgentDirectory,
    AgentDirectoryError,
    Conflict,
    InvalidApiKey,
    NotFound,
    SignUp,
    TransportError,
    ValidationFailed,
    VerificationFailed,
    parse_time,
    verify_webhook,
)

SERVER: Optional[ServerProcess] = None


def setUpModule() -> None:
    global SERVER
    # Writes here would exceed 20/min: the main server runs without limits; test_rate_limit.py covers 429.
    SERVER = ServerProcess(["--allow-private-urls", "--rate-limit", "off"]).start()


def tearDownModule() -> None:
    if SERVER is not None:
        SERVER.stop()


def client(**kwargs) -> AgentDirectory:  # type: ignore[no-untyped-def]
    assert SERVER is not None
    return AgentDirectory(SERVER.base_url, **kwargs)


def unique(prefix: str) -> str:
    return "{}-{}".format(prefix, uuid.uuid4().hex[:10])


def some_agents(count: int) -> List[Agent]:
    return list(itertools.islice(client().list_agents(page_size=100), count))


class HealthAndStatsTest(unittest.TestCase):
    def test_health(self) -> None:
        health = client().health()
        self.assertEqual(health.status, "ok")
        self.assertGreater(health.agents_indexed, 0)
        self.assertRegex(health.version, r"^\d+\.\d+\.\d+$")

    def test_stats(self) -> None:
        api = client()
        stats = api.stats()
        self.assertEqual(stats.total_agents, api.health().agents_indexed)
        self.assertGreaterEqual(stats.total_agents, stats.verified_agents)
        self.assertEqual(sum(stats.by_type.values()), stats.total_agents)
        self.assertTrue(stats.by_category)
        self.assertGreaterEqual(stats.reviews.count, 0)
        if stats.reviews.count:
            self.assertIsNotNone(stats.reviews.average_rating)

    def test_base_url_may_be_the_bare_origin(self) -> None:
        assert SERVER is not None
        self.assertEqual(AgentDirectory(SERVER.origin).health().status, "ok")
        self.assertEqual(AgentDirectory(SERVER.base_url + "/").health().status, "ok")


class AgentsTest(unittest.TestCase):
    def test_get_returns_every_profile_field(self) -> None:
        first = some_agents(1)[0]
        agent = client().get(first.id)
        self.assertEqual(agent.id, first.id)
        for name in ("name", "tagline", "source_url", "type", "created_at", "updated_at"):
            self.assertTrue(getattr(agent, name), name)
        self.assertIsInstance(agent.description, str)
        self.assertIsInstance(agent.author, str)
        self.assertIsInstance(agent.capabilities, list)
        self.assertIsInstance(agent.categories, list)
        self.assertIsInstance(agent.verified, bool)
        self.assertTrue(0 <= agent.trust_score <= 100)
        self.assertGreaterEqual(agent.rating.count, 0)
        self.assertTrue(agent.created_at.endswith("Z"))
        self.assertIsNotNone(parse_time(agent.created_at))
        self.assertIsNone(agent.score)
        self.assertEqual(agent.raw["id"], agent.id)

    def test_get_unknown_is_not_found_with_problem_details(self) -> None:
        with self.assertRaises(NotFound) as caught:
            client().get("no-such-agent-" + uuid.uuid4().hex)
        error = caught.exception
        self.assertIsInstance(error, AgentDirectoryError)
        self.assertEqual(error.status, 404)
        self.assertEqual(error.code, "not_found")
        self.assertTrue(error.title)
        self.assertTrue(error.detail)
        self.assertTrue(error.type)
        self.assertIn("application/problem+json", error.headers.get("content-type", ""))

    def test_get_malformed_id_is_a_validation_error(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            client().get("bad id!")
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(caught.exception.code, "validation_failed")

    def test_list_agents_follows_every_page(self) -> None:
        api = client()
        calls = spy_requests(api)
        agents = api.list_agents(page_size=50)
        items = list(agents)
        total = agents.total
        assert total is not None
        self.assertEqual(len(items), total)
        self.assertEqual(total, api.health().agents_indexed)
        self.assertEqual(len({agent.id for agent in items}), total)
        page_calls = [url for method, url in calls if "/agents?" in url]
        self.assertEqual(len(page_calls), math.ceil(total / 50))
        self.assertTrue(all("limit=50" in url for url in page_calls))

    def test_list_agents_pages(self) -> None:
        pages = list(itertools.islice(client().list_agents(page_size=7).pages(), 2))
        self.assertEqual([page.page for page in pages], [1, 2])
        self.assertTrue(all(page.limit == 7 and len(page.items) == 7 for page in pages))

    def test_list_agents_default_sort_is_trust_score_descending(self) -> None:
        scores = [agent.trust_score for agent in itertools.islice(client().list_agents(page_size=25), 60)]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_list_agents_sort_order_and_type(self) -> None:
        names = [a.name for a in itertools.islice(client().list_agents(sort="name", order="asc", page_size=30), 30)]
        self.assertEqual([n.lower() for n in names], sorted(n.lower() for n in names))
        agent_type = some_agents(1)[0].type
        typed = list(client().list_agents(type=agent_type, page_size=100))
        self.assertTrue(typed)
        self.assertTrue(all(agent.type == agent_type for agent in typed))
        self.assertEqual(len(typed), client().stats().by_type[agent_type])

    def test_list_agents_unknown_sort_is_400(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            next(iter(client().list_agents(sort="popularity")))
        self.assertEqual(caught.exception.status, 400)

    def test_bulk_of_120_ids_is_split_into_three_calls(self) -> None:
        real = [agent.id for agent in some_agents(110)]
        self.assertEqual(len(real), 110)
        fake = ["missing-{}-{}".format(i, uuid.uuid4().hex[:6]) for i in range(10)]
        ids: List[str] = []
        for i, agent_id in enumerate(real):
            ids.append(agent_id)
            if i % 11 == 5:
                ids.append(fake[i // 11])  # a missing id after every 11th real one
        self.assertEqual(len(ids), 120)
        api = client()
        calls = spy_requests(api)
        result = api.bulk(ids)
        bulk_calls = [url for method, url in calls if "/agents/bulk" in url]
        self.assertEqual(len(bulk_calls), 3)
        self.assertEqual([agent.id for agent in result.agents], real)
        self.assertEqual(result.missing, [i for i in ids if i in fake])
        self.assertEqual(sorted(result.missing), sorted(fake))

    def test_bulk_small_duplicates_and_empty(self) -> None:
        a, b = [agent.id for agent in some_agents(2)]
        api = client()
        calls = spy_requests(api)
        self.assertEqual(api.bulk([]).agents, [])
        self.assertEqual(calls, [])
        result = api.bulk([b, "nope-" + uuid.uuid4().hex[:6], a, b])
        self.assertEqual([agent.id for agent in result.agents], [b, a])
        self.assertEqual(len(result.missing), 1)
        self.assertEqual(len(calls), 1)


class SearchTest(unittest.TestCase):
    def test_search_finds_an_agent_by_name(self) -> None:
        target = some_agents(5)[4]
        api = client()
        calls = spy_requests(api)
        result = api.search(target.name, limit=5)
        self.assertEqual(calls[0][0], "GET")
        self.assertEqual(result.query, target.name)
        self.assertGreaterEqual(result.total, 1)
        self.assertLessEqual(len(result.agents), 5)
        self.assertIn(target.id, [agent.id for agent in result])
        for agent in result.agents:
            self.assertIsNotNone(agent.score)
        scores = [agent.score for agent in result.agents]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_search_is_typo_tolerant(self) -> None:
        target = next(a for a in some_agents(50) if len(a.name.split()[0]) >= 6)
        word = target.name.split()[0]
        typo = word[:2] + word[3] + word[2] + word[4:]  # swap two letters
        result = client().search(typo, limit=20)
        self.assertGreaterEqual(result.total, 1, "no hit for {!r} (from {!r})".format(typo, word))

    def test_search_with_filters_uses_post(self) -> None:
        sample = next(a for a in some_agents(50) if a.capabilities)
        capability = sample.capabilities[0]
        api = client()
        calls = spy_requests(api)
        result = api.search(capability, limit=50, type=sample.type, min_trust=0, capabilities=[capability])
        self.assertEqual(calls[0][0], "POST")
        self.assertIn(sample.id, [agent.id for agent in result.agents])
        for agent in result.agents:
            self.assertEqual(agent.type, sample.type)
            self.assertIn(capability, agent.capabilities)
        high = api.search(capability, limit=50, min_trust=sample.trust_score + 0.001)
        self.assertTrue(all(agent.trust_score >= sample.trust_score for agent in high.agents))
        self.assertNotIn(sample.id, [agent.id for agent in high.agents])

    def test_search_invalid_limit_is_400(self) -> None:
        with self.assertRaises(ValidationFailed):
            client().search("agent", limit=0)
        with self.assertRaises(ValidationFailed):
            client().search("agent", limit=1000, type="coding")

    def test_search_unknown_type_is_400(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            client().search("agent", type="toaster")
        self.assertEqual(caught.exception.code, "validation_failed")


class ReviewsTest(unittest.TestCase):
    def test_add_review_and_iterate_every_page(self) -> None:
        api = client()
        agent = some_agents(30)[-1]
        before = api.reviews(agent.id).total or 0
        created = [
            api.add_review(agent.id, 5, comment="Great agent", reviewer_name="Ada"),
            api.add_review(agent.id, 3),
            api.add_review(agent.id, 4, comment="Solid"),
        ]
        self.assertEqual(created[0].rating, 5)
        self.assertEqual(created[0].comment, "Great agent")
        self.assertEqual(created[0].reviewer_name, "Ada")
        self.assertEqual(created[0].agent_id, agent.id)
        self.assertIsNone(created[1].comment)
        self.assertIsNone(created[1].reviewer_name)
        self.assertTrue(created[1].created_at.endswith("Z"))
        reviews = api.reviews(agent.id, page_size=2)
        items = list(reviews)
        self.assertEqual(reviews.total, before + 3)
        self.assertEqual(len(items), before + 3)
        self.assertTrue({r.id for r in created} <= {r.id for r in items})
        self.assertEqual(api.get(agent.id).rating.count, agent.rating.count + 3)

    def test_invalid_rating_lists_the_field(self) -> None:
        agent = some_agents(1)[0]
        with self.assertRaises(ValidationFailed) as caught:
            client().add_review(agent.id, 7)
        error = caught.exception
        self.assertEqual(error.status, 400)
        self.assertEqual(error.code, "validation_failed")
        self.assertTrue(error.errors)
        self.assertIn("/rating", [e.pointer for e in error.errors])
        self.assertTrue(all(e.detail for e in error.errors))

    def test_body_over_one_mib_is_a_413_not_a_reset(self) -> None:
        # The server answers from the headers while urllib is still sending; it reads the rest, so the
        # client gets the problem details rather than a broken pipe.
        agent = some_agents(1)[0]
        for _ in range(3):
            with self.assertRaises(AgentDirectoryError) as caught:
                client().add_review(agent.id, 5, comment="a" * (4 * 1024 * 1024))
            self.assertEqual(caught.exception.status, 413)
            self.assertEqual(caught.exception.code, "payload_too_large")

    def test_review_of_unknown_agent_is_404(self) -> None:
        with self.assertRaises(NotFound):
            client().add_review("no-such-agent-" + uuid.uuid4().hex[:8], 4)
        with self.assertRaises(NotFound):
            list(client().reviews("no-such-agent-" + uuid.uuid4().hex[:8]))


class ConnectionsTest(unittest.TestCase):
    def test_connections_are_related_and_best_first(self) -> None:
        agent = some_agents(3)[2]
        connections = client().connections(agent.id, limit=5)
        self.assertTrue(connections)
        self.assertLessEqual(len(connections), 5)
        scores = [c.score for c in connections]
        self.assertEqual(scores, sorted(scores, reverse=True))
        for connection in connections:
            self.assertNotEqual(connection.agent.id, agent.id)
            self.assertTrue(connection.agent.name)
            self.assertTrue(connection.shared_categories or connection.shared_capabilities or connection.same_author)
            self.assertTrue(set(connection.shared_categories) <= set(agent.categories))
            self.assertTrue(set(connection.shared_capabilities) <= set(agent.capabilities))

    def test_connections_of_unknown_agent_is_404(self) -> None:
        with self.assertRaises(NotFound):
            client().connections("no-such-agent-" + uuid.uuid4().hex[:8])


class SubmissionsTest(unittest.TestCase):
    def test_register_and_follow(self) -> None:
        api = client()
        url = "https://example.com/{}".format(unique("agent"))
        submission = api.register(
            "Py Client Agent",
            "Registered from the Python client",
            url,
            description="An agent registered by the Python client test suite.",
            capabilities=["testing", "python"],
            categories=["quality"],
            type="coding",
            author="Tests",
            contact_email="owner@example.com",
        )
        self.assertEqual(submission.status, "pending")
        self.assertTrue(submission.id)
        self.assertEqual(submission.source_url, url)
        self.assertEqual(submission.capabilities, ["testing", "python"])
        self.assertEqual(submission.type, "coding")
        self.assertNotIn("contact_email", submission.raw)
        again = api.submission(submission.id)
        self.assertEqual(again.id, submission.id)
        self.assertEqual(again.status, "pending")
        self.assertIsNone(again.agent_id)

    def test_duplicate_source_url_is_a_conflict(self) -> None:
        api = client()
        url = "https://example.com/{}".format(unique("dup"))
        api.register("Dup One", "First", url)
        with self.assertRaises(Conflict) as caught:
            api.register("Dup Two", "Second", url)
        self.assertEqual(caught.exception.status, 409)
        self.assertEqual(caught.exception.code, "conflict")

    def test_source_url_of_a_listed_agent_is_a_conflict(self) -> None:
        listed = some_agents(1)[0]
        with self.assertRaises(Conflict):
            client().register("Copy", "Copy of a listed agent", listed.source_url)

    def test_invalid_submission_lists_the_fields(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            client().register("Bad", "Bad URL", "ftp://example.com/x")
        self.assertIn("/source_url", [e.pointer for e in caught.exception.errors])
        with self.assertRaises(ValidationFailed) as caught:
            client().register("Bad", "Unknown field", "https://example.com/" + unique("x"), colour="blue")
        self.assertTrue(caught.exception.errors)

    def test_unknown_submission_is_404(self) -> None:
        with self.assertRaises(NotFound):
            client().submission("sub-" + uuid.uuid4().hex[:10])


class ClaimsTest(unittest.TestCase):
    def _unverified_agent(self, skip: int = 0) -> Agent:
        return [a for a in client().list_agents(sort="name", page_size=100) if not a.verified][skip]

    def test_claim_gives_verification_instructions(self) -> None:
        agent = self._unverified_agent(0)
        api = client()
        claim = api.claim(agent.id, "Owner Name", "owner@example.com")
        self.assertEqual(claim.agent_id, agent.id)
        self.assertEqual(claim.status, "pending")
        # The first proof fits the source: a file in the repository for forge-hosted agents, else the origin's file.
        self.assertIn(claim.verification.method, ("repository-file", "well-known"))
        self.assertTrue(claim.verification.url.endswith("/.well-known/agent-directory-claim.txt"))
        self.assertTrue(claim.verification.token)
        self.assertEqual(claim.claimant_email, "owner@example.com")
        public = api.get_claim(claim.id)
        self.assertEqual(public.id, claim.id)
        self.assertIsNone(public.verification.token)
        self.assertIsNone(public.claimant_email)

    def test_verify_without_the_file_fails_and_stays_pending(self) -> None:
        agent = self._unverified_agent(1)
        api = client()
        claim = api.claim(agent.id, "Owner", "owner@example.com")
        with self.assertRaises(VerificationFailed) as caught:
            api.verify_claim(claim.id)
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.code, "verification_failed")
        self.assertEqual(api.get_claim(claim.id).status, "pending")

    def test_claim_errors(self) -> None:
        api = client()
        with self.assertRaises(NotFound):
            api.claim("no-such-agent-" + uuid.uuid4().hex[:8], "Owner", "owner@example.com")
        with self.assertRaises(NotFound):
            api.verify_claim("no-such-claim-" + uuid.uuid4().hex[:8])
        with self.assertRaises(ValidationFailed) as caught:
            api.claim(self._unverified_agent(2).id, "Owner", "not-an-email")
        self.assertIn("/claimant_email", [e.pointer for e in caught.exception.errors])

    @unittest.skipUnless(_support.cli_has("import"), "needs `npm run cli -- import` (not in src-api/cli.ts yet)")
    def test_verify_claim_with_the_well_known_file(self) -> None:
        assert SERVER is not None
        site = LocalHttpServer().start()
        try:
            agent_id = unique("py-claim")
            record = {
                "id": agent_id,
                "name": "Claimable Agent",
                "tagline": "Served from a local origin",
                "source_url": "{}/claimable".format(site.origin),
            }
            path = "{}/import.jsonl".format(SERVER.data_dir)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
            _support.run_cli(["import", path], SERVER.data_dir)
            api = client()
            self.assertFalse(api.get(agent_id).verified)
            claim = api.claim(agent_id, "Owner", "owner@example.com")
            self.assertEqual(claim.verification.url, site.origin + "/.well-known/agent-directory-claim.txt")
            assert claim.verification.token is not None
            site.files["/.well-known/agent-directory-claim.txt"] = claim.verification.token.encode()
            verified = api.verify_claim(claim.id)
            self.assertEqual(verified.status, "verified")
            self.assertTrue(api.get(agent_id).verified)
            with self.assertRaises(Conflict):
                api.verify_claim(claim.id)
        finally:
            site.stop()


def mailed_token(to: str, path: str, timeout: float = 10.0) -> str:
    """The token of the link to ``path`` in the newest mail to ``to``: the test server writes mails as .eml files."""
    assert SERVER is not None
    folder = Path(SERVER.data_dir) / "mail"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for file in sorted(folder.glob("*.eml"), reverse=True) if folder.exists() else []:
            mail = email.message_from_bytes(file.read_bytes())
            if to.lower() not in str(mail["To"]).lower():
                continue
            for part in mail.walk():
                if part.get_content_type() == "text/plain":
                    text = part.get_payload(decode=True).decode()
                    found = re.search(r"https?://\S+" + re.escape(path) + r"\?token=([\w-]+)", text)
                    if found:
                        return found.group(1)
        time.sleep(0.05)
    raise AssertionError("no mail to {} with a link to {}".format(to, path))


class NewsletterTest(unittest.TestCase):
    def test_double_opt_in_answers_the_same_for_every_address(self) -> None:
        api = client()
        address = "{}@Example.com".format(unique("Reader"))
        first = api.subscribe(address)
        self.assertIsInstance(first, SignUp)
        self.assertEqual((first.email, first.status), (address, "confirmation_sent"))

        confirmed = api.confirm_subscription(mailed_token(address, "/dashboard/newsletter/confirm"))
        self.assertEqual((confirmed.email, confirmed.status), (address, "subscribed"))

        # Known now, and the answer is the same (echoing what was sent).
        again = api.subscribe(address.upper())
        self.assertEqual((again.email, again.status), (address.upper(), "confirmation_sent"))

        left = api.unsubscribe(mailed_token(address, "/dashboard/newsletter/unsubscribe"))
        self.assertEqual((left.email, left.status), (address, "unsubscribed"))

    def test_bad_token_is_400_invalid_token(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            client().confirm_subscription("not-a-token")
        self.assertEqual(caught.exception.code, "invalid_token")

    def test_invalid_email_is_400(self) -> None:
        with self.assertRaises(ValidationFailed) as caught:
            client().subscribe("not an address")
        self.assertIn("/email", [e.pointer for e in caught.exception.errors])


class MarketingTest(unittest.TestCase):
    def test_posts_and_filters(self) -> None:
        api = client()
        posts = list(api.marketing_posts(page_size=50))
        for post in posts:
            self.assertTrue(post.id and post.title and post.body and post.tone and post.status and post.channel)
            self.assertTrue(post.created_at.endswith("Z"))
        if not posts:
            self.skipTest("the server has no marketing posts to filter")
        tone, status = posts[0].tone, posts[0].status
        by_tone = list(api.marketing_posts(tone=tone))
        self.assertTrue(by_tone and all(post.tone == tone for post in by_tone))
        by_status = list(api.marketing_posts(status=status))
        self.assertTrue(by_status and all(post.status == status for post in by_status))
        self.assertEqual(len(by_tone), sum(1 for post in posts if post.tone == tone))

    def test_unknown_status_filter_is_400(self) -> None:
        with self.assertRaises(ValidationFailed):
            next(iter(client().marketing_posts(status="bogus-status")))

    def test_ab_tests(self) -> None:
        tests = client().ab_tests()
        self.assertIsInstance(tests, list)
        for test in tests:
            self.assertTrue(test.id and test.name and test.status)
            self.assertGreaterEqual(len(test.variants), 2)
            for variant in test.variants:
                self.assertLessEqual(variant.conversions, variant.impressions)
                self.assertTrue(0 <= variant.rate <= 1)
            if test.p_value is not None:
                self.assertTrue(0 <= test.p_value <= 1)
            if test.winner is not None:
                self.assertIn(test.winner, [v.label for v in test.variants])

    def test_metrics(self) -> None:
        metrics = client().marketing_metrics()
        self.assertIsInstance(metrics.tone_distribution, dict)
        counts = metrics.publish_counts
        self.assertEqual(sum(counts.by_status.values()), counts.total)
        self.assertEqual(sum(metrics.tone_distribution.values()), counts.total)
        for day in counts.by_day:
            self.assertRegex(day.date, r"^\d{4}-\d{2}-\d{2}$")
            self.assertGreaterEqual(day.count, 0)


class ApiKeysTest(unittest.TestCase):
    def test_unknown_key_is_401(self) -> None:
        api = client(api_key="adk_this-key-does-not-exist")
        with self.assertRaises(InvalidApiKey) as caught:
            api.get(some_agents(1)[0].id)
        self.assertEqual(caught.exception.status, 401)
        self.assertEqual(caught.exception.code, "invalid_api_key")
        with self.assertRaises(InvalidApiKey):
            api.search("agent")

    @unittest.skipUnless(_support.cli_has("keys"), "needs `npm run cli -- keys create` (not in src-api/cli.ts yet)")
    def test_issued_key_is_accepted(self) -> None:
        assert SERVER is not None
        issued = json.loads(_support.run_cli(["keys", "create", "--name", "python-tests"], SERVER.data_dir))
        self.assertTrue(issued["key"].startswith("adk_"))
        api = client(api_key=issued["key"])
        self.assertEqual(api.get(some_agents(1)[0].id).id, some_agents(1)[0].id)


class RawRequestTest(unittest.TestCase):
    def test_unknown_route_is_404_problem(self) -> None:
        with self.assertRaises(NotFound) as caught:
            client().request("GET", "/no/such/route")
        self.assertEqual(caught.exception.code, "not_found")


class TransportTest(unittest.TestCase):
    def test_connection_refused_is_retried_for_gets_then_raised(self) -> None:
        sleeps = SleepRecorder()
        api = AgentDirectory("http://127.0.0.1:{}".format(free_port()), max_retries=2, sleep=sleeps)
        with self.assertRaises(TransportError) as caught:
            api.health()
        self.assertFalse(caught.exception.timeout)
        self.assertIsNone(caught.exception.status)
        self.assertEqual(sleeps.calls, [0.5, 1.0])

    def test_connection_refused_is_not_retried_for_writes(self) -> None:
        sleeps = SleepRecorder()
        api = AgentDirectory("http://127.0.0.1:{}".format(free_port()), max_retries=2, sleep=sleeps)
        with self.assertRaises(TransportError):
            api.subscribe("someone@example.com")
        self.assertEqual(sleeps.calls, [])

    def test_timeout(self) -> None:
        silent = SilentServer()
        try:
            sleeps = SleepRecorder()
            api = AgentDirectory("http://127.0.0.1:{}".format(silent.port), timeout=0.3, sleep=sleeps)
            with self.assertRaises(TransportError) as caught:
                api.health()
            self.assertTrue(caught.exception.timeout)
            self.assertEqual(sleeps.calls, [])
        finally:
            silent.stop()


class WebhookDeliveryTest(unittest.TestCase):
    @unittest.skipUnless(_support.cli_has("webhooks"), "needs `npm run cli -- webhooks add` (not in src-api/cli.ts yet)")
    def test_a_real_delivery_verifies(self) -> None:
        assert SERVER is not None
        receiver = LocalHttpServer().start()
        try:
            endpoint = json.loads(
                _support.run_cli(
                    ["webhooks", "add", "--url", receiver.origin + "/hook", "--events", "review.created"], SERVER.data_dir
                )
            )
            agent = some_agents(1)[0]
            review = client().add_review(agent.id, 4, comment="webhook check")
            post = receiver.wait_for_post(lambda p: review.id.encode() in p[2], timeout=30)
            self.assertIsNotNone(post, "no review.created delivery arrived")
            assert post is not None
            _path, headers, body = post
            self.assertTrue(re.match(r"^sha256=[0-9a-f]{64}$", headers["x-service-signature"]))
            self.assertTrue(verify_webhook(endpoint["secret"], body, headers["x-service-signature"]))
            self.assertFalse(verify_webhook(endpoint["secret"], body + b" ", headers["x-service-signature"]))
            self.assertEqual(json.loads(body)["event"], "review.created")
        finally:
            receiver.stop()


if __name__ == "__main__":
    unittest.main()
