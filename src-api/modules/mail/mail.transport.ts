import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../../config';
import type { MailRow } from './mail.table';

/** Hands one message over; resolves with where it went (the server's answer or the file), rejects on failure. */
export type MailTransport = {
  send(row: MailRow): Promise<string>;
  close(): void;
};

export interface MailTransportOptions {
  mail: MailConfig;
  dataDir: string;
  log?: (message: string) => void;
}

/**
 * SMTP through nodemailer when an SMTP URL is configured; otherwise each mail
 * is written as an .eml file into <dataDir>/mail/ (built by nodemailer too, so
 * it is the same MIME message an SMTP server would have received).
 */
export function createMailTransport({ mail, dataDir, log = console.log }: MailTransportOptions): MailTransport {
  const envelope = (row: MailRow) => ({
    from: mail.from,
    to: row.to,
    subject: row.subject,
    text: row.text,
    html: row.html,
    headers: row.headers,
    messageId: `<${row.id}@agent-directory>`,
  });

  if (mail.smtpUrl) {
    const transporter = nodemailer.createTransport({
      url: mail.smtpUrl,
      connectionTimeout: mail.timeoutMs,
      greetingTimeout: mail.timeoutMs,
      socketTimeout: mail.timeoutMs,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    return {
      async send(row) {
        const info = (await transporter.sendMail(envelope(row))) as { response?: string };
        return `smtp: ${info.response ?? 'accepted'}`;
      },
      close: () => transporter.close(),
    };
  }

  const folder = path.join(dataDir, 'mail');
  const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(row) {
      const info = (await builder.sendMail(envelope(row))) as { message: Buffer };
      await fs.promises.mkdir(folder, { recursive: true, mode: 0o700 });
      // Sortable by time, unique by id; mails hold personal data (links that sign in), so owner-only.
      const name = `${row.createdAt.replace(/[:.]/g, '-')}-${row.id}.eml`;
      const file = path.join(folder, name);
      // Written aside, then renamed: whoever watches the folder never reads half a mail.
      const partial = path.join(folder, `.${name}.part`);
      await fs.promises.writeFile(partial, info.message, { mode: 0o600 });
      await fs.promises.rename(partial, file);
      log(`mail: "${row.subject}" to ${row.to} written to ${file}`);
      return `file: ${file}`;
    },
    close: () => builder.close(),
  };
}
