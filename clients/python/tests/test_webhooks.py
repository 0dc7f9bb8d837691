"""verify_webhook: a known-answer vector, tampering and malformed headers (no server needed)."""

from __future__ import annotations

import unittest

import _support  # noqa: F401  (puts the client's src/ on sys.path)

from agent_directory import sign_webhook, verify_webhook

SECRET = "whsec_test_secret"
BODY = (
    b'{"id":"evt_01","event":"agent.registered","timestamp":"2025-01-01T00:00:00Z",'
    b'"data":{"agent_id":"agt_1","name":"Demo","source_url":"https://example.com/demo"}}'
)
# Computed independently: python3 -c "import hmac,hashlib; print(hmac.new(SECRET, BODY, hashlib.sha256).hexdigest())"
# and node -e "crypto.createHmac('sha256', SECRET).update(BODY).digest('hex')".
DIGEST = "a21bfada495b3a78716c43470e637274b42a8139424fea88dd0736062b8116a9"
HEADER = "sha256=" + DIGEST


class VerifyWebhookTest(unittest.TestCase):
    def test_known_answer(self) -> None:
        self.assertEqual(sign_webhook(SECRET, BODY), HEADER)
        self.assertTrue(verify_webhook(SECRET, BODY, HEADER))
        self.assertTrue(verify_webhook(SECRET.encode(), bytearray(BODY), HEADER))
        self.assertTrue(verify_webhook(SECRET, BODY.decode("utf-8"), HEADER))

    def test_tampered_body_fails(self) -> None:
        tampered = BODY.replace(b'"name":"Demo"', b'"name":"Evil"')
        self.assertNotEqual(tampered, BODY)
        self.assertFalse(verify_webhook(SECRET, tampered, HEADER))
        self.assertFalse(verify_webhook(SECRET, BODY + b"\n", HEADER))
        # Re-serialised JSON is not the same bytes: always verify the raw body.
        self.assertFalse(verify_webhook(SECRET, BODY.replace(b",", b", "), HEADER))

    def test_wrong_secret_fails(self) -> None:
        self.assertFalse(verify_webhook("whsec_other", BODY, HEADER))
        self.assertFalse(verify_webhook("", BODY, HEADER))

    def test_header_forms(self) -> None:
        self.assertTrue(verify_webhook(SECRET, BODY, DIGEST))  # bare hex
        self.assertTrue(verify_webhook(SECRET, BODY, "SHA256=" + DIGEST.upper()))
        self.assertTrue(verify_webhook(SECRET, BODY, "  " + HEADER + " "))

    def test_malformed_headers_are_false_not_errors(self) -> None:
        for header in [None, "", "sha256=", "sha256", "sha1=" + DIGEST, "sha256=" + DIGEST[:-1], "sha256=" + DIGEST + "0",
                       "sha256=" + "z" * 64, "sha256=" + DIGEST[:32] + "\u00e9" * 32, 12345, b"sha256=" + DIGEST.encode()]:
            with self.subTest(header=header):
                self.assertFalse(verify_webhook(SECRET, BODY, header))  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
