/**
 * Verification mail leaves through an outbox, never on the response path: step 1 writes the intent and
 * one sealed mail row in the same write, for every email, trusted or not (an untrusted address gets a
 * row marked `suppressed` that is never sent), so the answer takes the same work whoever asks. Rows are
 * sealed under the master key (they hold codes) and delivered by a due-work scanner on any node, or at
 * once by a nudge after the commit.
 */
import type { Keyring } from '../core/keyring.ts';
import { newId } from '../core/ids.ts';
import { DueScanner } from '../core/due-scanner.ts';
import { isConflict, type Doc, type Store, type WriteOp } from '../store/port.ts';
import type { Mail, Mailer } from '../runtime/mail.ts';

export const MAIL_OUTBOX = 'mail_outbox';
const LEASE_MS = 60_000;
const MAX_ATTEMPTS = 5;
/** rows are purged a day after they were written, sent or not */
const KEEP_MS = 24 * 3600_000;

export interface MailRow extends Doc {
  sealed: string;
  status: 'pending' | 'sent' | 'suppressed' | 'failed';
  next_attempt_at: string | null;
  attempts: number;
  created_at: string;
  sent_at: string | null;
  expires_at: string;
}

/** The write that queues `mail`; with `send: false` the same row is written but never delivered. */
export function mailOp(keyring: Keyring, mail: Mail, now: Date, send: boolean): WriteOp {
  const doc: MailRow = {
    id: newId('mail'),
    sealed: keyring.seal(JSON.stringify(mail)),
    status: send ? 'pending' : 'suppressed',
    next_attempt_at: send ? now.toISOString() : null,
    attempts: 0,
    created_at: now.toISOString(),
    sent_at: null,
    expires_at: new Date(now.getTime() + KEEP_MS).toISOString(),
  };
  return { op: 'insert', coll: MAIL_OUTBOX, doc };
}

type Log = { warn(...a: unknown[]): void };

export class MailOutbox {
  private scanner: DueScanner<MailRow>;
  private store: Store;
  private keyring: Keyring;
  private mailer: Mailer;
  private log: Log;
  private now: () => Date;

  constructor(store: Store, keyring: Keyring, mailer: Mailer, log: Log, now: () => Date, intervalMs = 1000) {
    this.store = store;
    this.keyring = keyring;
    this.mailer = mailer;
    this.log = log;
    this.now = now;
    this.scanner = new DueScanner<MailRow>({
      name: 'mail outbox',
      store,
      coll: MAIL_OUTBOX,
      dueField: 'next_attempt_at',
      filter: { status: 'pending' },
      leaseMs: LEASE_MS,
      intervalMs,
      now,
      log,
      handle: (row) => this.send(row),
    });
  }

  start(): void {
    this.scanner.start();
  }

  stop(): Promise<void> {
    return this.scanner.stop();
  }

  /** Delivers a row just written (the nudge): claims it by compare-and-set, so a scanner cannot send it too. */
  async deliverNow(id: string): Promise<void> {
    const row = await this.store.get<MailRow>(MAIL_OUTBOX, id);
    if (!row || row.status !== 'pending') return;
    const claimed: MailRow = { ...row, next_attempt_at: new Date(this.now().getTime() + LEASE_MS).toISOString() };
    try {
      await this.store.write([{ op: 'cas', coll: MAIL_OUTBOX, doc: claimed, expected: row.version! }]);
    } catch (e) {
      if (isConflict(e)) return; // the scanner took it
      throw e;
    }
    await this.send({ ...claimed, version: row.version! + 1 });
  }

  /** Sends a claimed row and records the outcome; a failure is retried with backoff, then given up. */
  private async send(row: MailRow): Promise<void> {
    const at = this.now();
    let patch: Partial<MailRow>;
    try {
      await this.mailer.send(JSON.parse(this.keyring.open(row.sealed)) as Mail);
      patch = { status: 'sent', sent_at: at.toISOString(), next_attempt_at: null };
    } catch (e) {
      const attempts = row.attempts + 1;
      // the error text only: never the message, which holds the code
      this.log.warn(`verification mail ${row.id} not sent (attempt ${attempts}):`, (e as Error)?.message ?? 'error');
      patch =
        attempts >= MAX_ATTEMPTS
          ? { status: 'failed', attempts, next_attempt_at: null }
          : { attempts, next_attempt_at: new Date(at.getTime() + 5000 * 2 ** attempts).toISOString() };
    }
    try {
      await this.store.write([{ op: 'cas', coll: MAIL_OUTBOX, doc: { ...row, ...patch }, expected: row.version! }]);
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
}
