/** The registration decision (lib/onboarding/intents.ts) without a store: gates in order, and what it consumes. */
import {
  decideRegistration,
  type IntentDoc,
  type InvitationDoc,
  type PowChallengeDoc,
  type RegistrationFacts,
} from '../../lib/onboarding/intents.ts';
import { solvePow } from '../../lib/onboarding/pow.ts';

const NOW = new Date('2026-03-01T00:00:00.000Z');
const later = new Date(NOW.getTime() + 60_000).toISOString();
const intent = (over: Partial<IntentDoc> = {}): IntentDoc => ({
  id: 'ri_1',
  version: 3,
  email: 'a@shop.test',
  expires_at: later,
  created_at: NOW.toISOString(),
  verified: true,
  code_hash: null,
  code_expires_at: null,
  attempts: 0,
  invitation_id: null,
  consumed_by: null,
  ...over,
});
const challenge = (over: Partial<PowChallengeDoc> = {}): PowChallengeDoc => ({
  id: 'pow_1',
  version: 1,
  intent_id: 'ri_1',
  challenge: 'c-1',
  difficulty: 4,
  expires_at: later,
  used: false,
  ...over,
});
const invitation = (over: Partial<InvitationDoc> = {}): InvitationDoc => ({
  id: 'inv_1',
  version: 2,
  email: null,
  expires_at: null,
  used_by: null,
  ...over,
});
const facts = (over: Partial<RegistrationFacts> = {}): RegistrationFacts => ({
  bearer: null,
  sandbox: true,
  intentNamed: true,
  intent: intent(),
  invitation: null,
  challenge: challenge(),
  nonce: solvePow('c-1', 4),
  trusted: true,
  now: NOW,
  ...over,
});
const refusal = (f: RegistrationFacts) => {
  try {
    decideRegistration(f);
  } catch (e) {
    return `${(e as { code: number }).code} ${(e as Error).message}`;
  }
  return 'ok';
};

describe('registration decision', () => {
  it('a trusted, verified intent with solved proof of work registers and consumes intent and challenge', () => {
    const d = decideRegistration(facts());
    expect(d.email).toBe('a@shop.test');
    const ops = d.consume('mer_1');
    expect(ops.map((o) => [o.op, o.coll])).toEqual([
      ['cas', 'pow_challenges'],
      ['cas', 'registration_intents'],
    ]);
    expect(ops[0]).toMatchObject({ doc: { used: true }, expected: 1 });
    expect(ops[1]).toMatchObject({ doc: { consumed_by: 'mer_1' }, expected: 3 });
  });

  it('refuses in order: registrant, intent, verification, reuse, proof of work, trust', () => {
    expect(refusal(facts({ sandbox: false }))).toMatch(/^403 sandbox must be true/);
    expect(refusal(facts({ intent: null }))).toMatch(/^400 registration_intent_id is unknown or expired/);
    expect(refusal(facts({ intent: intent({ expires_at: NOW.toISOString() }) }))).toMatch(
      /^400 registration_intent_id is unknown or expired/,
    );
    expect(refusal(facts({ intent: intent({ verified: false }), challenge: null }))).toMatch(
      /^400 the email of this registration intent is not verified/,
    );
    expect(refusal(facts({ intent: intent({ consumed_by: 'mer_0' }) }))).toMatch(/^409 this registration intent was already used/);
    for (const c of [null, challenge({ used: true }), challenge({ intent_id: 'ri_2' }), challenge({ expires_at: NOW.toISOString() })]) {
      expect(refusal(facts({ challenge: c, trusted: false }))).toMatch(/^400 proof_of_work_challenge_id is unknown/);
    }
    expect(refusal(facts({ nonce: 'nope', trusted: false }))).toMatch(/^400 proof_of_work_nonce does not solve/);
    expect(refusal(facts({ trusted: false }))).toMatch(/^403 registration is not permitted for this email/);
  });

  it('an open invitation stands in for proof of work and the trust gate, and is used up', () => {
    const inv = invitation();
    const d = decideRegistration(
      facts({ intent: intent({ invitation_id: 'inv_1' }), invitation: inv, challenge: null, nonce: undefined, trusted: false }),
    );
    expect(
      d
        .consume('mer_2')
        .map((o) => [
          o.coll,
          (o as { doc: Record<string, unknown> }).doc.used_by ?? (o as { doc: Record<string, unknown> }).doc.consumed_by,
        ]),
    ).toEqual([
      ['registration_intents', 'mer_2'],
      ['invitations', 'mer_2'],
    ]);
    // a used invitation does not
    expect(
      refusal(
        facts({
          intent: intent({ invitation_id: 'inv_1' }),
          invitation: invitation({ used_by: 'mer_0' }),
          challenge: null,
          trusted: false,
        }),
      ),
    ).toMatch(/^400 proof_of_work_challenge_id/);
  });

  it('a bearer user registers live without an intent, under the bearer email; with an intent, skips only the trust gate', () => {
    const bearer = { user_id: 'usr_1', email: 'ops@corp.test' };
    const d = decideRegistration(facts({ bearer, sandbox: false, intentNamed: false, intent: null, challenge: null }));
    expect(d.email).toBe('ops@corp.test');
    expect(d.consume('mer_3')).toEqual([]);
    expect(decideRegistration(facts({ bearer, sandbox: false, trusted: false })).email).toBe('a@shop.test');
    expect(refusal(facts({ bearer, sandbox: false, challenge: null }))).toMatch(/^400 proof_of_work_challenge_id/);
  });
});
