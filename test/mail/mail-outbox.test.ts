import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver';
import { startTestServer, type TestServer } from '../helpers/test-server';

describe('mail outbox', () => {
  let server: TestServer | undefined;
  let smtp: SmtpReceiver | undefined;

  afterEach(async () => {
    await server?.close();
    await smtp?.close();
    server = undefined;
    smtp = undefined;
  });

  const queue = (target: TestServer, to: string, headers?: Record<string, string>) =>
    target.services.store.transaction(() =>
      target.services.mail.queueInTransaction({
        kind: 'test',
        to,
        subject: 'Hello <there>',
        paragraphs: ['First line & more.'],
        action: { label: 'Open', url: 'http://example.test/open?token=abc' },
        headers,
      }),
    );

  it('sends queued mail through a real SMTP server, with plain-text and HTML bodies and extra headers', async () => {
    smtp = await startSmtpReceiver();
    server = await startTestServer({ mail: { smtpUrl: smtp.url, from: 'Directory <dir@example.test>' } });
    const id = await queue(server, 'ann@example.test', { 'List-Unsubscribe': '<http://example.test/unsub>' });
    const mail = await smtp.waitFor((m) => m.to.includes('ann@example.test'));
    expect(mail.subject).toBe('Hello <there>');
    expect(mail.text).toContain('First line & more.');
    expect(mail.links).toContain('http://example.test/open?token=abc');
    expect(mail.html).toContain('First line &amp; more.');
    expect(mail.headers['list-unsubscribe']).toBe('<http://example.test/unsub>');
    expect(mail.headers.from).toBe('Directory <dir@example.test>');
    await expect.poll(async () => (await server!.services.mail.get(id))?.status).toBe('sent');
  });

  it('retries with backoff while the SMTP server refuses, and fails nothing else', async () => {
    smtp = await startSmtpReceiver();
    smtp.failNext(2);
    server = await startTestServer({ mail: { smtpUrl: smtp.url, retryDelaysMs: [50, 50, 50] } });
    const id = await queue(server, 'bob@example.test');
    // The API keeps answering meanwhile.
    expect((await server.api('/health')).status).toBe(200);
    const mail = await smtp.waitFor((m) => m.to.includes('bob@example.test'));
    expect(mail.subject).toBe('Hello <there>');
    expect(smtp.attempts).toBe(3);
    await expect.poll(() => server!.services.mail.get(id)).toMatchObject({ status: 'sent', attemptCount: 3 });
  });

  it('gives up after the last retry when the server is unreachable, and records why', async () => {
    smtp = await startSmtpReceiver();
    const unreachable = smtp.url;
    await smtp.close();
    smtp = undefined;
    server = await startTestServer({ mail: { smtpUrl: unreachable, retryDelaysMs: [20], timeoutMs: 2_000 } });
    const id = await queue(server, 'cat@example.test');
    await expect.poll(async () => (await server!.services.mail.get(id))?.status, { timeout: 10_000 }).toBe('failed');
    expect(await server.services.mail.get(id)).toMatchObject({
      attemptCount: 2,
      lastError: expect.stringMatching(/ECONNREFUSED|connect/i),
    });
  });

  it('writes .eml files into <data-dir>/mail/ without an SMTP URL', async () => {
    server = await startTestServer();
    const id = await queue(server, 'dan@example.test');
    const folder = path.join(server.dataDir, 'mail');
    // Sent once the file is in place: from then on it is whole (written aside and renamed).
    await expect.poll(async () => (await server!.services.mail.get(id))?.status).toBe('sent');
    expect(fs.readdirSync(folder)).toHaveLength(1);
    const [file] = fs.readdirSync(folder);
    expect(file).toMatch(new RegExp(`${id}\\.eml$`));
    const eml = fs.readFileSync(path.join(folder, file!), 'utf8');
    expect(eml).toMatch(/^To: dan@example\.test$/m);
    expect(eml).toMatch(/^Subject: Hello <there>$/m);
    expect(eml).toContain('text/html');
    expect(fs.statSync(path.join(folder, file!)).mode & 0o777).toBe(0o600);
  });
});
