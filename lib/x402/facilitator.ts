/**
 * This service as an x402 facilitator (the ecosystem's `/supported`, `/verify`, `/settle`), for resource
 * servers built on `@x402/express`, `@x402/hono`, `@x402/next` with `HTTPFacilitatorClient` pointed at
 * `<service>/v1/x402/facilitator`, and the chain facts every x402 v2 offer of the service states.
 *
 * - A merchant settles only to its own wallets: `payTo` must be the address of one of them on that chain
 *   and network (otherwise a 403, checked before anything else is read).
 * - A settled payment is a challenge of the merchant like any other (`source: facilitator`), recorded when
 *   it is first settled with an id derived from the proof key, so the same payment presented twice (or to
 *   two nodes at once) is one challenge, one redemption, one transaction, one ledger credit
 *   (lib/x402/redeem.ts); the gas wallet pays the gas, booked per lib/x402/costs.ts.
 * - verify reads the chain only to say what settling would find (the authorization unused, the balance
 *   there); it writes nothing.
 */
import type { Schemas } from '../http/contract.ts';
import { createHash } from 'node:crypto';
import { Interface, getAddress } from 'ethers';
import type { Doc, Store } from '../store/port.ts';
import { isDuplicate } from '../store/port.ts';
import { forbidden } from '../core/errors.ts';
import { networkForbidden, networkGate, type MerchantStanding } from '../core/environment.ts';
import type { Rail } from '../../config/rails.ts';
import { checkRailPolicy, type RailPolicy } from '../merchants/rail-policy.ts';
import { ethProvider } from '../chains/clients.ts';
import { caip2Network, tokenDomain } from './chain-facts.ts';
import { decodePayload, verifyEip3009, verifySolana, ProofError, type ChallengeTerms, type Proof } from './proof.ts';
import type { X402Redeemer } from './redeem.ts';
import { CHALLENGES, REDEMPTIONS, type ChallengeDoc, type RedemptionDoc } from './model.ts';
import { sameRequirements, X402_V2, type PaymentRequirements, type RailFacts, type SettleResponse, type VerifyResponse } from './wire.ts';

export interface X402Env {
  store: Store;
  /** the enabled rails */
  rails: Rail[];
  rpcUrl(chain: string, network: string): string | null;
  /** the configured token contract or mint of a rail (null: none, only agent wallets can pay) */
  tokenOf(rail: Rail): string | null;
  gasWallet(chain: 'ethereum' | 'solana', network: string): string;
  /** the smallest challenge of a rail, smallest units (lib/x402/costs.ts x402MinimumSubunits) */
  minimum(rail: Rail): bigint;
  redeemer(): X402Redeemer;
  now(): Date;
}

/** The rails the x402 v2 `exact` scheme can pay: USDC with a configured token (EIP-3009) or mint (SPL). */
function payableRails(env: X402Env): Rail[] {
  return env.rails.filter((r) => r.token === 'USDC' && env.tokenOf(r) && env.rpcUrl(r.chain, r.network));
}

/** What the chain says about a rail for the v2 wire; null when standard clients cannot pay it. */
export async function railFacts(env: X402Env, rail: Rail): Promise<RailFacts | null> {
  const token = env.tokenOf(rail);
  const rpc = env.rpcUrl(rail.chain, rail.network);
  if (rail.token !== 'USDC' || !token || !rpc) return null;
  const network = await caip2Network(rail.chain, rpc);
  if (rail.chain === 'ethereum') {
    const d = await tokenDomain(rpc, token);
    return { chain: 'ethereum', network, domain: { name: d.name, version: d.version } };
  }
  return { chain: 'solana', network, feePayer: env.gasWallet('solana', rail.network) };
}

/** GET …/supported: one `exact` kind per network the service can settle on (Solana: with its fee payer). */
export async function supported(env: X402Env): Promise<{
  kinds: Array<{ x402Version: 2; scheme: 'exact'; network: string; extra?: Record<string, unknown> }>;
  extensions: string[];
  signers: Record<string, string[]>;
}> {
  const kinds: Array<{ x402Version: 2; scheme: 'exact'; network: string; extra?: Record<string, unknown> }> = [];
  const signers: Record<string, string[]> = {};
  for (const rail of payableRails(env)) {
    const f = await railFacts(env, rail);
    if (!f || kinds.some((k) => k.network === f.network)) continue;
    kinds.push({ x402Version: X402_V2, scheme: 'exact', network: f.network, ...(f.feePayer ? { extra: { feePayer: f.feePayer } } : {}) });
    signers[f.network] = [env.gasWallet(rail.chain, rail.network)];
  }
  return { kinds, extensions: [], signers };
}

/** The body of /verify and /settle, as openapi.json's X402FacilitatorRequest (checked before it gets here). */
export type FacilitatorRequest = Schemas['X402FacilitatorRequest'];

/** A payment the facilitator can reason about: the rail, the merchant's wallet, the terms and the verified proof. */
interface Checked {
  rail: Rail;
  wallet: { id: string; address: string };
  req: PaymentRequirements;
  terms: ChallengeTerms;
  proof: Exclude<Proof, { kind: 'agent_wallet' }>;
  payer: string;
  proofKey: string;
}

class Invalid extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

const UINT = /^[1-9]\d{0,77}$/;

async function railOf(env: X402Env, network: unknown): Promise<{ rail: Rail; facts: RailFacts } | null> {
  if (typeof network !== 'string') return null;
  for (const rail of payableRails(env)) {
    const f = await railFacts(env, rail);
    if (f?.network === network) return { rail, facts: f };
  }
  return null;
}

/** The merchant a facilitator call acts for, with what the environment gate and the rail policy read. */
export interface FacilitatorMerchant extends MerchantStanding {
  id: string;
  rail_policy?: RailPolicy | null;
}

/**
 * Everything verify and settle check before the chain is asked; a 403 for a payTo that is not the
 * merchant's, and for a network the merchant may not be paid on (the environment gate: sandbox merchants
 * testnet only, live merchants mainnet only and with KYC).
 */
async function check(env: X402Env, merchant: FacilitatorMerchant, body: FacilitatorRequest): Promise<Checked> {
  const merchantId = merchant.id;
  const r = body.paymentRequirements;
  if (r.scheme !== 'exact') throw new Invalid('unsupported_scheme', "only the 'exact' scheme is settled here");
  const found = await railOf(env, r.network);
  if (!found) throw new Invalid('invalid_network', `network ${String(r.network)} is not one this service settles on; see /supported`);
  const { rail } = found;
  const refusal = networkGate(merchant, rail.network, 'x402 settlements');
  if (refusal)
    throw networkForbidden(refusal, 'paymentRequirements.network', {
      sandbox: 'Settle payments on a testnet network with a sandbox merchant’s key.',
      live: 'Settle payments on a mainnet network with a live merchant’s key.',
    });
  // a payment on a rail the merchant's policy excludes is never settled for it
  checkRailPolicy(merchant.rail_policy, rail, 'paymentRequirements.network');
  let payTo: string;
  try {
    payTo = rail.chain === 'ethereum' ? getAddress(String(r.payTo)) : String(r.payTo);
  } catch {
    throw new Invalid('invalid_payment_requirements', 'payTo is not an address');
  }
  const wallet = await env.store.findOne<Doc & { merchant_id: string; address: string }>('wallets', {
    address: payTo,
    chain: rail.chain,
    network: rail.network,
  });
  if (!wallet || wallet.merchant_id !== merchantId)
    throw forbidden('payTo is not one of your wallets: this facilitator settles only into the wallets of the API key’s merchant', {
      field: 'paymentRequirements.payTo',
      remediation: 'Set payTo to the address of one of your wallets on that chain and network (GET /v1/wallets).',
    });
  const token = env.tokenOf(rail)!;
  const asset = String(r.asset);
  if (rail.chain === 'ethereum' ? asset.toLowerCase() !== token.toLowerCase() : asset !== token)
    throw new Invalid('invalid_asset', `the asset on ${found.facts.network} must be ${token}`);
  const amount = String(r.amount);
  if (!UINT.test(amount)) throw new Invalid('invalid_payment_requirements', 'amount must be a positive integer of smallest units');
  if (BigInt(amount) < env.minimum(rail))
    throw new Invalid('amount_below_minimum', `the amount is below the ${rail.chain}:${rail.network}:USDC minimum of ${env.minimum(rail)}`);
  const maxTimeoutSeconds = Number(r.maxTimeoutSeconds);
  if (!Number.isInteger(maxTimeoutSeconds) || maxTimeoutSeconds < 1)
    throw new Invalid('invalid_payment_requirements', 'maxTimeoutSeconds must be a positive integer');
  const req: PaymentRequirements = {
    scheme: 'exact',
    network: found.facts.network,
    amount,
    asset: token,
    payTo,
    maxTimeoutSeconds,
    extra: (r.extra as Record<string, unknown>) ?? {},
  };
  if (body.paymentPayload?.x402Version !== X402_V2) throw new Invalid('invalid_x402_version', 'the payment payload must be x402 version 2');
  let decoded: Proof;
  try {
    decoded = decodePayload(body.paymentPayload);
  } catch (e) {
    if (e instanceof ProofError) throw new Invalid('invalid_payload', e.message);
    throw e;
  }
  if (decoded.kind === 'agent_wallet') throw new Invalid('invalid_payload', 'not an exact payment');
  if (!decoded.accepted || !sameRequirements(decoded.accepted as Partial<PaymentRequirements>, req))
    throw new Invalid('invalid_payment_requirements', 'the payload accepted other requirements than these');
  // the requirements are the terms here: a challenge id the payload may carry is not ours to check
  const proof = { ...decoded, memo: null };
  const terms: ChallengeTerms = {
    id: '',
    chain: rail.chain,
    network: rail.network,
    token: rail.token,
    asset: token,
    pay_to: payTo,
    amount_subunits: amount,
    x402_network: found.facts.network,
  };
  const rpc = env.rpcUrl(rail.chain, rail.network)!;
  let v: { payer: string; proof_key: string };
  try {
    v =
      proof.kind === 'eip3009'
        ? verifyEip3009(proof, terms, (await tokenDomain(rpc, token)).separator, Math.floor(env.now().getTime() / 1000))
        : verifySolana(proof, terms, env.gasWallet('solana', rail.network));
  } catch (e) {
    if (e instanceof ProofError) throw new Invalid(e.reason, e.message);
    throw e;
  }
  return { rail, wallet: { id: wallet.id, address: payTo }, req, terms, proof, payer: v.payer, proofKey: v.proof_key };
}

const TOKEN = new Interface([
  'function balanceOf(address) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

/** What settling would find on chain: an EIP-3009 authorization unused and the payer's balance there. */
async function chainState(env: X402Env, c: Checked): Promise<void> {
  if (c.proof.kind !== 'eip3009') return;
  const p = await ethProvider(env.rpcUrl(c.rail.chain, c.rail.network)!);
  const token = c.terms.asset;
  const a = c.proof.authorization;
  const [used] = TOKEN.decodeFunctionResult(
    'authorizationState',
    await p.call({ to: token, data: TOKEN.encodeFunctionData('authorizationState', [a.from, a.nonce]) }),
  );
  if (used) throw new Invalid('already_redeemed', 'the authorization has been used on chain');
  const [balance] = TOKEN.decodeFunctionResult(
    'balanceOf',
    await p.call({ to: token, data: TOKEN.encodeFunctionData('balanceOf', [a.from]) }),
  );
  if ((balance as bigint) < BigInt(a.value)) throw new Invalid('insufficient_funds', 'the payer does not hold the amount');
}

/** POST …/verify: the VerifyResponse; writes nothing. */
export async function verify(env: X402Env, merchant: FacilitatorMerchant, body: FacilitatorRequest): Promise<VerifyResponse> {
  let c: Checked | null = null;
  try {
    c = await check(env, merchant, body);
    if (await env.store.findOne<RedemptionDoc>(REDEMPTIONS, { proof_key: c.proofKey }))
      throw new Invalid('already_redeemed', 'this payment has already been settled');
    await chainState(env, c);
    return { isValid: true, payer: c.payer };
  } catch (e) {
    if (e instanceof Invalid)
      return { isValid: false, invalidReason: e.reason, invalidMessage: e.message, ...(c ? { payer: c.payer } : {}) };
    throw e;
  }
}

/** The challenge a facilitator settlement is recorded as: one per proof key, whoever presents it. */
export const facilitatorChallengeId = (proofKey: string) => `xfs_${createHash('sha256').update(proofKey).digest('hex').slice(0, 32)}`;

/** POST …/settle: settles on chain (gas wallet) and credits the merchant's wallet once; the SettleResponse. */
export async function settle(env: X402Env, merchant: FacilitatorMerchant, body: FacilitatorRequest): Promise<SettleResponse> {
  const merchantId = merchant.id;
  let c: Checked;
  try {
    c = await check(env, merchant, body);
  } catch (e) {
    if (e instanceof Invalid)
      return {
        success: false,
        errorReason: e.reason,
        errorMessage: e.message,
        transaction: '',
        network: String(body.paymentRequirements.network ?? ''),
      };
    throw e;
  }
  const now = env.now();
  const id = facilitatorChallengeId(c.proofKey);
  const resource = body.paymentPayload.resource as { url?: unknown; description?: unknown } | undefined;
  const doc: ChallengeDoc = {
    id,
    merchant_id: merchantId,
    wallet_id: c.wallet.id,
    chain: c.rail.chain,
    network: c.rail.network,
    token: c.rail.token,
    decimals: c.rail.decimals,
    asset: c.terms.asset,
    pay_to: c.wallet.address,
    amount_subunits: c.req.amount,
    resource: typeof resource?.url === 'string' ? resource.url.slice(0, 2048) : '',
    description: typeof resource?.description === 'string' ? resource.description.slice(0, 500) : null,
    price_id: null,
    status: 'open',
    x402_network: c.req.network,
    source: 'facilitator',
    // the authorization's own window bounds it too; a Solana blockhash lives about a minute
    expires_at: new Date(now.getTime() + Math.min(c.req.maxTimeoutSeconds, 86_400) * 1000).toISOString(),
    created_at: now.toISOString(),
    redeemed_at: null,
  };
  try {
    await env.store.write([{ op: 'insert', coll: CHALLENGES, doc }]);
  } catch (e) {
    if (!isDuplicate(e)) throw e;
  }
  const challenge = (await env.store.get<ChallengeDoc>(CHALLENGES, id))!;
  const proofHash = createHash('sha256').update(JSON.stringify(body.paymentPayload)).digest('hex');
  try {
    const r = await env.redeemer().settle(challenge, { ...c.proof, memo: id }, proofHash);
    const s = r.settle_response;
    return r.status === 'settled'
      ? { success: true, transaction: s.transaction, network: c.req.network, payer: r.payer }
      : {
          success: false,
          errorReason: 'settlement_pending',
          errorMessage: 'the settlement has not confirmed yet: settle the same payload again later (it is credited once when it confirms)',
          transaction: s.transaction,
          network: c.req.network,
          payer: r.payer,
        };
  } catch (e) {
    if (e instanceof ProofError)
      return { success: false, errorReason: e.reason, errorMessage: e.message, transaction: '', network: c.req.network, payer: c.payer };
    throw e;
  }
}
