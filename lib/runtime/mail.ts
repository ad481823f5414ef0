/**
 * Outgoing email: SMTP through nodemailer when SMTP_URL is set; otherwise the message goes to the log
 * (a development mail backend), so that `npm start` works with nothing else running.
 */
import type { Transporter } from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}
export interface Mailer {
  send(mail: Mail): Promise<void>;
}
type Log = { info: (...args: unknown[]) => void };

export function createMailer(smtpUrl: string, from: string, log: Log): Mailer {
  if (!smtpUrl) {
    return {
      async send(mail) {
        log.info(`[dev mail backend] to=${mail.to} subject="${mail.subject}"\n${mail.text}`);
      },
    };
  }
  // nodemailer loads with the first message (a node that sends none does not hold it)
  let transport: Promise<Transporter> | null = null;
  return {
    async send(mail) {
      transport ??= import('nodemailer').then((m) => m.default.createTransport(smtpUrl));
      await (await transport).sendMail({ from, ...mail });
    },
  };
}
