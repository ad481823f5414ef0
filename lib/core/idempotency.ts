/**
 * Idempotent creation: the record of a key is written in the same atomic write as what it creates, so
 * concurrent requests with one key create exactly one thing; the losers replay the winner's response.
 * Same key and payload within 24 hours: the original response. Different payload: 409, code 5.
 * A response that holds one-time secrets is sealed under a key derived from the master key AND the
 * idempotency key: reading it back needs both, so a copy of the store alone (with a guessable
 * idempotency key) yields nothing.
 */
import { conflict, IDEMPOTENCY_MISMATCH } from './errors.ts';
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../store/port.ts';
import { openWith, sealWith, type Keyring } from './keyring.ts';
import { sha256Hex } from './secrets.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

interface IdempotencyDoc extends Doc {
  payload_hash: string;
  response?: unknown;
  sealed_response?: string;
  expires_at: string;
}

/** JSON with sorted keys, so that the same payload always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface IdempotencyRequest {
  /** what the key is scoped to: the endpoint and the caller */
  scope: string;
  key: string;
  payload: unknown;
  now: Date;
  /** seal the stored response (it holds secrets) */
  seal?: boolean;
}

export class Idempotency {
  private store: Store;
  private keyring: Keyring | null;
  /** `keyring` is needed only to seal responses (`seal: true`) */
  constructor(store: Store, keyring: Keyring | null = null) {
    this.store = store;
    this.keyring = keyring;
  }

  private sealKey(key: string): Buffer {
    if (!this.keyring) throw new Error('sealed idempotent responses need the keyring');
    return this.keyring.derive('idempotency-seal', key);
  }

  private id(req: IdempotencyRequest): string {
    return `${req.scope}:${sha256Hex(req.key)}`;
  }

  /** The stored response for this key, undefined when there is none; 409 when the payload differs. */
  async replay<T>(req: IdempotencyRequest): Promise<T | undefined> {
    const doc = await this.store.get<IdempotencyDoc>('idempotency', this.id(req));
    if (!doc) return undefined;
    if (doc.payload_hash !== sha256Hex(canonicalJson(req.payload))) throw conflict(IDEMPOTENCY_MISMATCH);
    if (doc.sealed_response) return JSON.parse(openWith(this.sealKey(req.key), doc.sealed_response)) as T;
    return doc.response as T;
  }

  /** The write that records the response; put it in the same store.write as the creation. */
  record(req: IdempotencyRequest, response: unknown): WriteOp {
    const doc: IdempotencyDoc = {
      id: this.id(req),
      payload_hash: sha256Hex(canonicalJson(req.payload)),
      expires_at: new Date(req.now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
      created_at: req.now.toISOString(),
    };
    if (req.seal) doc.sealed_response = sealWith(this.sealKey(req.key), JSON.stringify(response));
    else doc.response = response;
    return { op: 'insert', coll: 'idempotency', doc };
  }

  /**
   * Runs `create` unless the key was used; `create` must include `record(req, response)` in its write.
   * A lost race (on the record, or on a row the winner changed first) replays the winner's response.
   */
  async run<T>(req: IdempotencyRequest, create: () => Promise<T>): Promise<T> {
    const earlier = await this.replay<T>(req);
    if (earlier !== undefined) return earlier;
    try {
      return await create();
    } catch (e) {
      if ((isDuplicate(e) && e.coll === 'idempotency') || isConflict(e)) {
        const winner = await this.replay<T>(req);
        if (winner !== undefined) return winner;
      }
      throw e;
    }
  }
}
