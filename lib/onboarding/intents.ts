/**
 * Registration intents and what they are bound to (proof-of-work challenges, invitations), and the
 * registration decision as a pure function, like lib/catalog/rules.ts: `register` in
 * services/merchants.service.ts validates the body, reads what the decision needs, calls
 * `decideRegistration`, then writes the merchant and the decision's ops in one atomic write.
 */
import { badRequest, conflict, forbidden } from '../core/errors.ts';

const RESTART = 'Start again with POST /v1/merchants/email-verification (or `payments login`), then confirm and solve a new challenge.';
import type { Doc, WriteOp } from '../store/port.ts';
import { verifyPow } from './pow.ts';

export const INTENT_TTL_MS = 30 * 60_000;
export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_ATTEMPTS = 5;
export const CHALLENGE_TTL_MS = 15 * 60_000;

export interface IntentDoc extends Doc {
  email: string;
  expires_at: string;
  created_at: string;
  verified: boolean;
  code_hash: string | null;
  code_expires_at: string | null;
  attempts: number;
  invitation_id: string | null;
  consumed_by: string | null;
}

export interface PowChallengeDoc extends Doc {
  intent_id: string;
  challenge: string;
  difficulty: number;
  expires_at: string;
  used: boolean;
}

export interface InvitationDoc extends Doc {
  email: string | null;
  expires_at: string | null;
  used_by: string | null;
}

/** An intent that exists and has not expired, or the 400 that says to start again. */
export function liveIntent(intent: IntentDoc | null, now: Date): IntentDoc {
  if (!intent || intent.expires_at <= now.toISOString())
    throw badRequest('registration_intent_id is unknown or expired; start again with email verification', {
      field: 'registration_intent_id',
      remediation: RESTART,
    });
  return intent;
}

/** Whether an unused invitation lets the intent skip proof of work and the trust gate. */
export const invitationOpen = (invitation: InvitationDoc | null): invitation is InvitationDoc =>
  invitation !== null && invitation.used_by === null;

export interface RegistrationFacts {
  /** a bearer user registering a live merchant (no intent needed) */
  bearer: { user_id: string; email: string } | null;
  sandbox: boolean;
  /** the body names an intent (required without a bearer) */
  intentNamed: boolean;
  intent: IntentDoc | null;
  invitation: InvitationDoc | null;
  challenge: PowChallengeDoc | null;
  nonce: string | undefined;
  /** the intent's email passes the trust gate (allowlists) */
  trusted: boolean;
  now: Date;
}

export interface RegistrationDecision {
  email: string;
  /** consuming the intent, the challenge and the invitation, for the merchant's own write */
  consume(merchantId: string): WriteOp[];
}

/** Who may register: a sandbox merchant needs no bearer, a live one does. Checked before anything is read. */
export function checkRegistrant(bearer: RegistrationFacts['bearer'], sandbox: boolean): void {
  if (!bearer && !sandbox)
    throw forbidden('sandbox must be true for an unauthenticated caller; a live merchant needs a bearer token', {
      field: 'sandbox',
      remediation:
        'Set sandbox to true, or send an operator-issued bearer token in Authorization: Bearer <token> to register a live merchant.',
    });
}

/**
 * The registration decision, in order: the intent (verified, unused), then proof of work unless an open
 * invitation stands in for it, then the trust gate (unless invited or a bearer user). A bearer user without
 * an intent registers under the bearer's email.
 */
export function decideRegistration(f: RegistrationFacts): RegistrationDecision {
  checkRegistrant(f.bearer, f.sandbox);
  if (f.bearer && !f.intentNamed) return { email: f.bearer.email, consume: () => [] };
  const intent = liveIntent(f.intent, f.now);
  if (!intent.verified)
    throw badRequest('the email of this registration intent is not verified', {
      field: 'registration_intent_id',
      remediation: 'Confirm the email first with POST /v1/merchants/email-verification/confirm and the mailed code.',
    });
  if (intent.consumed_by)
    throw conflict('this registration intent was already used', { field: 'registration_intent_id', remediation: RESTART });
  const invited = invitationOpen(f.invitation) && intent.invitation_id === f.invitation.id;
  const challenge = f.challenge;
  if (!invited) {
    const fresh = challenge !== null && challenge.expires_at > f.now.toISOString();
    if (!challenge || !fresh || challenge.intent_id !== intent.id || challenge.used) {
      throw badRequest('proof_of_work_challenge_id is unknown, expired, already used or not for this registration', {
        field: 'proof_of_work_challenge_id',
        remediation: 'Ask for a new challenge with POST /v1/merchants/registration-proof-of-work and solve it.',
      });
    }
    if (!verifyPow(challenge.challenge, f.nonce ?? '', challenge.difficulty))
      throw badRequest('proof_of_work_nonce does not solve the challenge', {
        field: 'proof_of_work_nonce',
        remediation: 'Send a nonce whose SHA-256 of "<challenge>:<nonce>" has at least difficulty leading zero bits.',
      });
  }
  if (!invited && !f.bearer && !f.trusted)
    throw forbidden('registration is not permitted for this email', {
      remediation: 'Ask the operator for an invitation token (or to trust your email domain), then start again with it.',
    });
  const invitation = invited ? f.invitation : null;
  return {
    email: intent.email,
    consume: (merchantId) => [
      ...(!invited && challenge
        ? [{ op: 'cas' as const, coll: 'pow_challenges', doc: { ...challenge, used: true }, expected: challenge.version! }]
        : []),
      { op: 'cas', coll: 'registration_intents', doc: { ...intent, consumed_by: merchantId }, expected: intent.version! },
      ...(invitation
        ? [{ op: 'cas' as const, coll: 'invitations', doc: { ...invitation, used_by: merchantId }, expected: invitation.version! }]
        : []),
    ],
  };
}
