/**
 * Where a refund goes. A destination the merchant names is checked like a payout's (lib/payouts/
 * destination.ts) and must be outside the service. Without one, the refund goes back to the address that
 * paid: the sender the listeners recorded on each deposit (lib/chains/deposit-inbox.ts: ERC-20 Transfer
 * `from`, the ETH transaction's sender, the Solana transfer's owner). The service asks the merchant to name
 * the destination (400, field destination) when it cannot vouch for that address:
 * - a deposit's sender is unknown, or the deposits came from more than one address;
 * - the sender is a contract (code at the address on Ethereum; on Solana an address off the curve, a
 *   program-derived address, or one owned by a program): a smart-contract wallet, a router or a
 *   custodian's vault may not credit the buyer what it receives;
 * - the sender is one of this service's own addresses (a wallet or a deposit address);
 * - the sender also paid sessions of several other merchants (SHARED_AFTER): a shared address such as
 *   an exchange's hot wallet, which credits no one in particular (a buyer who shops at two merchants of
 *   this service is not one).
 */
import { getAddress } from 'ethers';
import { PublicKey, SystemProgram } from '@solana/web3.js';
import type { Config } from '../../config/index.ts';
import { badRequest, unavailable } from '../core/errors.ts';
import type { Store } from '../store/port.ts';
import { DEPOSITS, type DepositDoc } from '../chains/deposit-inbox.ts';
import { ethProvider, rpcErrorText, solConnection } from '../chains/clients.ts';
import { checkDestination } from '../payouts/destination.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';

/** what an address is on chain: a plain account (a key holder) or code / a program's account */
export type AddressKind = 'account' | 'contract';
export type InspectAddress = (chain: 'ethereum' | 'solana', network: string, address: string) => Promise<AddressKind>;

export interface DestinationDeps {
  store: Store;
  inspect: InspectAddress;
}

export interface RefundDestination {
  destination: string | null;
  source: 'sender' | 'merchant';
}

const ask = (why: string) =>
  badRequest(`${why}; send destination, the address to refund`, {
    field: 'destination',
    remediation: "Send destination: an address the buyer confirmed is theirs on the session's chain.",
  });

/** The chain reader of addresses, from the configured RPC URLs. */
export function addressInspector(config: Pick<Config, 'chains'>): InspectAddress {
  return async (chain, network, address) => {
    const rpcUrl = config.chains[chain][network as 'testnet' | 'mainnet']?.rpcUrl;
    if (!rpcUrl) throw unavailable(`refunds on ${chain} ${network} need its RPC (none is configured)`, { retryable: false });
    try {
      if (chain === 'ethereum') return (await (await ethProvider(rpcUrl)).getCode(address)) === '0x' ? 'account' : 'contract';
      const key = new PublicKey(address);
      if (!PublicKey.isOnCurve(key.toBytes())) return 'contract';
      const info = await solConnection(rpcUrl).getAccountInfo(key, 'confirmed');
      // no account (spent to zero) or one the System Program owns: a key holder's
      return !info || info.owner.equals(SystemProgram.programId) ? 'account' : 'contract';
    } catch (e) {
      throw unavailable(`the paying address cannot be checked now: ${rpcErrorText(e, 200)}`, { retryable: true });
    }
  };
}

const normal = (chain: string, a: string) => (chain === 'ethereum' ? getAddress(a.toLowerCase()) : a);

/** an address of this service: a wallet's or a session's deposit address */
async function isOurs(store: Store, chain: string, network: string, address: string): Promise<boolean> {
  const [wallet, session] = await Promise.all([
    store.findOne('wallets', { chain, network, address }),
    store.findOne('payment_sessions', { address, chain, network }),
  ]);
  return !!(wallet || session);
}

/**
 * The refund's destination: `requested` when sent (checked), else the sender of the session's on-chain
 * deposits. `simulated`: a refund of simulated money, which needs no address (null when none is sent).
 */
export async function refundDestination(
  d: DestinationDeps,
  s: Pick<PaymentSessionState, 'id' | 'merchant_id' | 'chain' | 'network' | 'deposits'>,
  requested: string | undefined,
  simulated: boolean,
): Promise<RefundDestination> {
  const chain = s.chain as 'ethereum' | 'solana';
  if (requested !== undefined) {
    const dest = checkDestination(chain, requested);
    if (!dest.ok) throw badRequest(dest.reason, { field: 'destination' });
    if (await isOurs(d.store, chain, s.network, dest.address))
      throw badRequest('destination is an address of this service; a refund goes to the buyer', { field: 'destination' });
    return { destination: dest.address, source: 'merchant' };
  }
  if (simulated) return { destination: null, source: 'sender' };
  const paid = s.deposits.filter((x) => x.counted && !x.reverted && !x.simulated);
  const docs = await Promise.all(paid.map((x) => d.store.get<DepositDoc>(DEPOSITS, x.key)));
  const senders = new Set<string>();
  for (const doc of docs) {
    if (!doc?.from_address) throw ask('the address that paid this session is not known');
    senders.add(normal(chain, doc.from_address));
  }
  if (senders.size !== 1) throw ask(`this session was paid from ${senders.size} addresses`);
  const sender = [...senders][0]!;
  if (await isOurs(d.store, chain, s.network, sender)) throw ask('this session was paid from an address of this service, not by the buyer');
  if ((await d.inspect(chain, s.network, sender)) === 'contract')
    throw ask(`the address that paid this session (${sender}) is a contract or a program's account, which may not credit the buyer`);
  if (await paidOtherMerchants(d.store, s, sender))
    throw ask(
      `the address that paid this session (${sender}) also paid ${SHARED_AFTER} or more other merchants: a shared address such as an exchange's`,
    );
  return { destination: sender, source: 'sender' };
}

/** other merchants whose sessions an address paid before it counts as shared (an exchange's, a custodian's) */
export const SHARED_AFTER = 3;

/** whether `sender` paid sessions of SHARED_AFTER other merchants or more (the deposits it sent, bounded) */
async function paidOtherMerchants(
  store: Store,
  s: Pick<PaymentSessionState, 'merchant_id' | 'chain' | 'network'>,
  sender: string,
): Promise<boolean> {
  const sent = await store.find<DepositDoc>(DEPOSITS, { chain: s.chain, network: s.network, from_address: sender }, { limit: 200 });
  const sessions = [...new Set(sent.map((x) => x.session_id).filter((x): x is string => !!x))];
  if (sessions.length <= SHARED_AFTER) return false;
  const owners = await store.find<PaymentSessionState>('payment_sessions', { id: { $in: sessions } });
  return new Set(owners.map((o) => o.merchant_id).filter((id) => id !== s.merchant_id)).size >= SHARED_AFTER;
}
