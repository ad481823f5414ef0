/**
 * The challenges this process issued, kept so that the spend that pays one and the redeem that consumes it
 * do not read it back (lib/spend/facts.ts resolveTarget, ./redeem.ts). A challenge's terms never change; its
 * one change is open → redeemed when an on-chain settlement finishes (that path reads it from the store). A
 * kept copy redeemed since is stale in its status only, and decides nothing alone: the wallet actor reads
 * the challenge's payment row before a spend pays it, and a redeem's insert of the redemption (keyed by the
 * challenge id) refuses a second one. Per store (a test runs several services),
 * bounded, dropped once redeemed here.
 */
import type { Store } from '../store/port.ts';
import { trimOldest } from '../core/bounded.ts';
import { CHALLENGES, type ChallengeDoc } from './model.ts';

// a paid request redeems its challenge within moments: a few thousand cover the load, at a few MB
const MAX = 4_096;
const kept = new WeakMap<Store, Map<string, ChallengeDoc>>();

/** After its insert: the challenge as stored (every adapter gives an inserted document version 1). */
export function keepChallenge(store: Store, doc: ChallengeDoc): void {
  let m = kept.get(store);
  if (!m) kept.set(store, (m = new Map()));
  trimOldest(m, MAX - 1);
  m.set(doc.id, { ...doc, version: doc.version ?? 1 });
}

export function forgetChallenge(store: Store, id: string): void {
  kept.get(store)?.delete(id);
}

/** The challenge of this id: the kept copy, else the stored one. */
export async function knownChallenge(store: Store, id: string): Promise<ChallengeDoc | null> {
  const hit = kept.get(store)?.get(id);
  return hit ? { ...hit } : store.get<ChallengeDoc>(CHALLENGES, id);
}
