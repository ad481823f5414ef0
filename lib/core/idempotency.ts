/**
 * Idempotent creation: the record of a key is written in the same atomic write as what it creates, so
 * concurrent requests with one key create exactly one thing; the losers replay the winner's response.
 * Same key and payload within 24 hours: the original response. Different payload: 409, code 5.
 * A response that holds one-time secrets is sealed under a key derived from the master key AND the
 * idempotency key: reading it back needs both, so a copy of the store alone (with a guessable
 * idempotency key) yields nothing.
 *
 * One mechanism for every create, in two forms:
 * - `run` + `record`: the key's record (with the response) goes into the creation's own atomic write
 *   (catalog, merchant registration);
 * - `reserve` + `resourceOf` + `release`: when the creating write happens elsewhere (a session actor on
 *   another node), the key is reserved with the id of the resource to create before anything is written,
 *   a replay answers with that resource as it is now, and a creation that fails frees the key.
 * One key rule (`idempotencyKey`): 1 to 255 visible ASCII characters, scoped by the caller's `scope`
 * (endpoint and merchant).
 */
import { REMEDIATION, badRequest, conflict, IDEMPOTENCY_MISMATCH } from './errors.ts';
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../store/port.ts';
import { openWith, sealWith, type Keyring } from './keyring.ts';
import { sha256Hex } from './secrets.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/** how long a replay waits for the resource a concurrent first request is still creating */
const RESERVED_WAIT_MS = 5_000;
/**
 * A reservation this old whose resource still does not exist belongs to a creation that died with its
 * node (killed between the reservation and the creating write): a retry resumes that creation under the
 * reserved id instead of answering 409 for the rest of the key's 24 hours. Resuming under the same id is
 * safe even if the first creation is somehow still running: both create one resource, one id.
 */
export const RESUME_RESERVED_AFTER_MS = 10_000;

/** The one rule for an idempotency key (header or body field): visible ASCII, as Stripe's keys. */
const KEY_RULE = /^[\x21-\x7e]{1,255}$/;
/**
 * The key when there is one, undefined when none was sent; a 400 when it breaks the rule. `field` is
 * where it came from: the Idempotency-Key header, or a body field (registration's idempotency_key).
 */
export function idempotencyKey(value: unknown, field = 'Idempotency-Key'): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_RULE.test(value))
    throw badRequest(`${field} must be 1 to 255 visible ASCII characters`, {
      field,
      remediation: `Send ${field} as 1 to 255 visible ASCII characters, e.g. a UUID.`,
    });
  return value;
}

interface IdempotencyDoc extends Doc {
  payload_hash: string;
  response?: unknown;
  sealed_response?: string;
  /** reserve: the id of the resource this key creates */
  resource_id?: string;
  /** reserve, records written before resource_id had its name */
  session_id?: string;
  expires_at: string;
}

/** JSON with sorted keys, so that the same payload always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
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
    if (doc.payload_hash !== sha256Hex(canonicalJson(req.payload)))
      throw conflict(IDEMPOTENCY_MISMATCH, { remediation: REMEDIATION.idempotency });
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
   * Reserves the key for the resource `resourceId` before it is created elsewhere. Returns null when the
   * reservation is ours, or the id an earlier request with this key reserved (409 for another payload).
   */
  async reserve(req: IdempotencyRequest, resourceId: string): Promise<string | null> {
    const doc: IdempotencyDoc = {
      id: this.id(req),
      payload_hash: sha256Hex(canonicalJson(req.payload)),
      resource_id: resourceId,
      created_at: req.now.toISOString(),
      expires_at: new Date(req.now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
    };
    try {
      await this.store.write([{ op: 'insert', coll: 'idempotency', doc }]);
      return null;
    } catch (e) {
      if (!isDuplicate(e)) throw e;
    }
    const winner = await this.resourceOf(req);
    // the winner failed and freed the key between our insert and our read: the caller may retry
    if (winner === undefined)
      throw conflict('a request with this Idempotency-Key is still in progress; retry it', {
        retryable: true,
        remediation: REMEDIATION.retryLater,
      });
    return winner;
  }

  /** The id reserved under this key, undefined when there is none; 409 when the payload differs. */
  async resourceOf(req: IdempotencyRequest): Promise<string | undefined> {
    const doc = await this.store.get<IdempotencyDoc>('idempotency', this.id(req));
    if (!doc) return undefined;
    if (doc.payload_hash !== sha256Hex(canonicalJson(req.payload)))
      throw conflict(IDEMPOTENCY_MISMATCH, { remediation: REMEDIATION.idempotency });
    return doc.resource_id ?? doc.session_id;
  }

  /**
   * A replay of a reserved create: the resource an earlier request with this key made, as it is now;
   * null when the key is unused. While the first request is still creating it, waits up to `waitMs`.
   */
  async replayResource<T>(
    req: IdempotencyRequest,
    load: (id: string) => Promise<T | null>,
    resume?: (id: string) => Promise<T>,
    waitMs = RESERVED_WAIT_MS,
  ): Promise<T | null> {
    const id = await this.resourceOf(req);
    return id === undefined ? null : this.awaitResource(req, id, load, resume, waitMs);
  }

  /**
   * Waits for the reserved resource `id` to exist; a 409 (retry) when its creation is still running or
   * failed. With `resume`, a reservation older than RESUME_RESERVED_AFTER_MS whose resource never
   * appeared is created by this request under the reserved id.
   */
  async awaitResource<T>(
    req: IdempotencyRequest,
    id: string,
    load: (id: string) => Promise<T | null>,
    resume?: (id: string) => Promise<T>,
    waitMs = RESERVED_WAIT_MS,
  ): Promise<T> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = await load(id);
      if (found) return found;
      const doc = await this.store.get<IdempotencyDoc>('idempotency', this.id(req));
      // the first request failed and freed the key
      if (!doc) break;
      if (resume && req.now.getTime() - Date.parse(doc.created_at as string) >= RESUME_RESERVED_AFTER_MS) return resume(id);
      // the first request is still creating it
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw conflict('a request with this Idempotency-Key is still in progress; retry it', {
      retryable: true,
      remediation: REMEDIATION.retryLater,
    });
  }

  /** Frees a reservation whose creation failed, so the client can fix the request and use the key again. */
  async release(req: IdempotencyRequest): Promise<void> {
    await this.store.write([{ op: 'delete', coll: 'idempotency', id: this.id(req) }]);
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
