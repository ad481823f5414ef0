/**
 * Creating payment sessions, without a broker: the checks in the documented order (./policy.ts), the
 * one idempotency mechanism (lib/core/idempotency.ts: the key is reserved with the new session's id
 * before anything is written), the daily volume (./volume.ts), a fresh address and the actor's `create`.
 * The facade passes what needs the broker (sending the actor a message, the catalog's reference check).
 */
import type { Config } from '../../config/index.ts';
import { newId } from '../core/ids.ts';
import { refusedBeforeWrite } from '../core/errors.ts';
import type { Keyring } from '../core/keyring.ts';
import { Idempotency, type IdempotencyRequest } from '../core/idempotency.ts';
import type { Store } from '../store/port.ts';
import type { AddressChain } from '../addresses/addresses.ts';
import { isDue, isOpen, type PaymentSessionState, type SessionMsg, type SessionReply } from './payment-session.ts';
import { quotePrice } from '../rates/quote.ts';
import type { RatesEngine } from '../rates/engine.ts';
import { checkRailPolicy } from '../merchants/rail-policy.ts';
import { withStanding, type StandingSource } from '../merchants/caller.ts';
import type { ReferenceCheck } from '../catalog/model.ts';
import {
  checkAmountLimit,
  checkNetworkAccess,
  checkoutReference,
  decideCreateBody,
  environmentOf,
  needsKyc,
  quotedRequest,
  type CreateBody,
  type CreateRequest,
} from './policy.ts';
import { DailyVolume } from './volume.ts';
import { newSessionState, type AddressSource, type SessionOwner } from './new-session.ts';

/** The merchant a session is created for; `standing` as the gateway read it for this request, when it did. */
export type CreatingMerchant = StandingSource;

/** What a creation needs from the broker, per request. */
export interface SessionCalls {
  send(id: string, msg: SessionMsg): Promise<SessionReply>;
  /** the catalog answers a 4xx when the session does not match the reference (merchant, amount, rail, expiry) */
  checkReference(args: ReferenceCheck): Promise<unknown>;
  log: { warn(...args: unknown[]): void };
}

export interface SessionsOptions {
  store: Store;
  config: Pick<Config, 'rails' | 'sessionAmountLimit' | 'dailyVolumeLimit' | 'webhookAllowPrivate'>;
  keyring: Keyring;
  now: () => Date;
  /** fresh spot rates, for prices in fiat */
  rates: Pick<RatesEngine, 'rate'>;
}

export class Sessions {
  private readonly o: SessionsOptions;
  private readonly idempotency: Idempotency;
  private readonly volume: DailyVolume;
  /** set when the service starts (the seed is loaded then) */
  addresses: AddressSource | null = null;

  constructor(o: SessionsOptions) {
    this.o = o;
    this.idempotency = new Idempotency(o.store, o.keyring);
    this.volume = new DailyVolume(o.store, o.now);
  }

  load = (id: unknown): Promise<PaymentSessionState | null> =>
    typeof id === 'string' ? this.o.store.get<PaymentSessionState>('payment_sessions', id) : Promise.resolve(null);

  /** A session read after its deadline but before the scanner reached it expires now (one answer everywhere). */
  async current(calls: Pick<SessionCalls, 'send'>, s: PaymentSessionState): Promise<PaymentSessionState> {
    if (isOpen(s.status) && isDue(s, this.o.now())) return (await calls.send(s.id, { type: 'expire' })).session;
    return s;
  }

  /** A fresh address and the actor's `create`. */
  async open(calls: Pick<SessionCalls, 'send'>, owner: SessionOwner, req: CreateRequest, id?: string): Promise<PaymentSessionState> {
    const addresses = this.addresses;
    if (!addresses) throw new Error('the sessions service has not started');
    const { address, index } = await addresses.allocate(req.rail.chain as AddressChain);
    const session = newSessionState(owner, req, { address, index, fingerprint: addresses.fingerprint }, this.o.now(), id);
    return (await calls.send(session.id, { type: 'create', session })).session;
  }

  /** The checks in the documented order; the catalog check fails closed (no catalog: 503). */
  private async decide(calls: SessionCalls, merchant: CreatingMerchant, body: CreateBody): Promise<CreateRequest> {
    const draft = decideCreateBody(body, this.o.config.rails, { allowHttpReturnUrl: this.o.config.webhookAllowPrivate });
    // the standing the gateway read to authenticate this very request (no second read of the merchant)
    const account = await withStanding(this.o.store, merchant);
    // before a payable session exists: a rail outside the merchant's policy is refused (400 on paymentMethod)
    checkRailPolicy(account.rail_policy, draft.rail);
    checkNetworkAccess(draft.rail, merchant.sandbox, needsKyc(draft.rail, merchant.sandbox) ? account.kyc_status : undefined);
    const ref = checkoutReference(draft.metadata);
    const check = (terms: { amount_subunits: string } | { price: { currency: string; amount_minor: string } }) =>
      ref === undefined
        ? undefined
        : calls.checkReference({
            merchant_id: merchant.merchant_id,
            checkout_reference_id: ref,
            chain: draft.rail.chain,
            network: draft.rail.network,
            token: draft.rail.token,
            ...terms,
          });
    if (draft.price === undefined) {
      checkAmountLimit(draft.expected, draft.rail, this.o.config.sessionAmountLimit);
      await check({ amount_subunits: draft.expected.toString() });
      return draft;
    }
    // a price in fiat: the reference names the price; a rate is read only once every other check passed
    await check({ price: { currency: draft.price.currency, amount_minor: draft.price.minor.toString() } });
    const { subunits, quote } = await quotePrice(this.o.rates, draft.price, draft.rail, this.o.now());
    const req = quotedRequest(draft, subunits, quote);
    checkAmountLimit(req.expected, req.rail, this.o.config.sessionAmountLimit);
    return req;
  }

  /**
   * POST /v1/payment_sessions for a merchant, with an optional (already checked) Idempotency-Key: the same
   * key and body answer with the session the first request created, as it is now.
   */
  async create(calls: SessionCalls, merchant: CreatingMerchant, body: CreateBody, key: string | undefined): Promise<PaymentSessionState> {
    const { idempotency, load } = this;
    const idem: IdempotencyRequest | null = key
      ? { scope: `sessions.create:${merchant.merchant_id}`, key, payload: body, now: this.o.now() }
      : null;
    // a reservation whose node died before writing its session: this request creates it, same id
    const resume = async (id: string) => this.build(calls, merchant, await this.decide(calls, merchant, body), id, idem);
    if (idem) {
      const earlier = await idempotency.replayResource(idem, load, resume);
      if (earlier) return this.current(calls, earlier);
    }
    const req = await this.decide(calls, merchant, body);
    const sessionId = newId('ps');
    if (idem) {
      const winner = await idempotency.reserve(idem, sessionId);
      // a concurrent request with the same key won the reservation: answer with its session
      if (winner !== null) return idempotency.awaitResource(idem, winner, load, resume);
    }
    return this.build(calls, merchant, req, sessionId, idem);
  }

  /** Creates the session `sessionId` (the key, when there is one, is already reserved for it). */
  private async build(
    calls: SessionCalls,
    merchant: CreatingMerchant,
    req: CreateRequest,
    sessionId: string,
    idem: IdempotencyRequest | null,
  ): Promise<PaymentSessionState> {
    const { idempotency, load } = this;
    let release: (() => Promise<void>) | null = null;
    try {
      const limit = this.o.config.dailyVolumeLimit;
      if (limit !== null) release = await this.volume.reserve(merchant.merchant_id, req.rail, req.expected, limit, sessionId);
      const owner = {
        merchant_id: merchant.merchant_id,
        sandbox: merchant.sandbox,
        demo: false,
        environment: environmentOf(merchant.sandbox),
      };
      return await this.open(calls, owner, req, sessionId);
    } catch (e) {
      // the actor may have committed before its reply was lost: that session keeps its volume and key
      if (await load(sessionId).catch(() => null)) throw e;
      // nor does a failure that does not prove nothing was written (a time-out, the actor's node gone
      // mid-call, its request taken by the node's next instance): the session may commit after this read, so
      // its key stays reserved for it (a retry answers with it, or creates it under the same id once the
      // reservation is old: lib/core/idempotency.ts) and its volume stays counted
      if (!refusedBeforeWrite(e)) throw e;
      await release?.().catch((err) => calls.log.warn('daily volume not released:', (err as Error).message));
      if (idem) await idempotency.release(idem).catch(() => undefined);
      throw e;
    }
  }
}
