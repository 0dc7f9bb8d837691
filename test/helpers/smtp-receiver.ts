import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** Header values as sent (unfolded), by lower-case name. */
  headers: Record<string, string>;
  /** Every http(s) link in the plain-text body, in order. */
  links: string[];
}

export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** Resolves with the first mail (already received or coming) that matches. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Make the next `n` messages fail with a 451 (temporary) error. */
  failNext(n: number): void;
  attempts: number;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (a random port) that keeps what it receives, parsed. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const waiters: { match: (mail: ReceivedMail) => boolean; resolve: (mail: ReceivedMail) => void }[] = [];
  let failures = 0;
  let attempts = 0;

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      attempts++;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (failures > 0) {
          failures--;
          const error = Object.assign(new Error('Try again later'), { responseCode: 451 });
          callback(error);
          return;
        }
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            const text = parsed.text ?? '';
            const mail: ReceivedMail = {
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
              subject: parsed.subject ?? '',
              text,
              html: typeof parsed.html === 'string' ? parsed.html : '',
              headers: rawHeaders(parsed),
              links: [...text.matchAll(/https?:\/\/[^\s<>"]+/g)].map((m) => m[0]),
            };
            mails.push(mail);
            for (const waiter of [...waiters]) {
              if (waiter.match(mail)) {
                waiters.splice(waiters.indexOf(waiter), 1);
                waiter.resolve(mail);
              }
            }
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };

  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    get attempts() {
      return attempts;
    },
    waitFor(match, timeoutMs = 10_000) {
      const found = mails.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) {
            waiters.splice(index, 1);
            reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${mails.map((m) => m.subject).join(', ') || 'none'})`));
          }
        }, timeoutMs).unref();
      });
    },
    failNext(n) {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The value of a query parameter of the first link in a mail whose path ends with `pathEnd`. */
export function tokenFromMail(mail: ReceivedMail, pathEnd: string, param = 'token'): string {
  const link = mail.links.find((url) => new URL(url).pathname.endsWith(pathEnd));
  if (!link) throw new Error(`no link to …${pathEnd} in mail "${mail.subject}": ${mail.links.join(', ')}`);
  const value = new URL(link).searchParams.get(param);
  if (!value) throw new Error(`link ${link} has no ${param}`);
  return value;
}

function rawHeaders(parsed: ParsedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines)
    headers[key] = line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n\s+/g, ' ')
      .trim();
  return headers;
}
