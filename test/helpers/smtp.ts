/** A real SMTP receiver (smtp-server) on a free port that keeps every message it accepts. */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** the six-digit code of the newest mail to `email`, waiting for it to arrive */
  waitForCode(email: string, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** `host`: the address to listen on (default 127.0.0.1). */
export async function startSmtpReceiver(host = '127.0.0.1'): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${host}:${port}`,
    mails,
    async waitForCode(email, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const mail = [...mails].reverse().find((m) => m.to.includes(email.toLowerCase()));
        const code = mail && /code is (\d{6})/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[1];
        if (code) return code;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no verification code for ${email} within ${timeoutMs} ms`);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
