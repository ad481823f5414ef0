/**
 * What the x402 v2 wire says about a chain, read from the chain itself and never assumed: the CAIP-2
 * network id (`eip155:<chain id>` from the node; Solana by its genesis hash, so a local validator is named
 * by its own), a token's EIP-712 domain (name and version, checked against its DOMAIN_SEPARATOR), and the
 * token's own record of an EIP-3009 authorization that someone else submitted (a front-run). Cached per
 * RPC URL and token: none of these change while a node runs. No store here.
 */
import { Interface, TypedDataEncoder, getAddress, zeroPadValue, id as topicOf } from 'ethers';
import { ethProvider, solConnection } from '../chains/clients.ts';

/** CAIP-2 ids of the public Solana clusters (their genesis hashes' first 32 characters) */
export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

const TOKEN_ABI = new Interface([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);

const networks = new Map<string, Promise<string>>();
const domains = new Map<string, Promise<TokenDomain>>();

function cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let hit = map.get(key);
  if (!hit) {
    hit = load();
    // a failed read (node down) is asked again next time
    hit.catch(() => map.delete(key));
    map.set(key, hit);
  }
  return hit;
}

/** `eip155:<chain id>` or `solana:<first 32 characters of the genesis hash>`, as the node reports it. */
export function caip2Network(chain: 'ethereum' | 'solana', rpcUrl: string): Promise<string> {
  return cached(networks, `${chain}|${rpcUrl}`, async () => {
    if (chain === 'ethereum') return `eip155:${(await (await ethProvider(rpcUrl)).getNetwork()).chainId}`;
    return `solana:${(await solConnection(rpcUrl).getGenesisHash()).slice(0, 32)}`;
  });
}

export interface TokenDomain {
  name: string;
  version: string;
  chainId: bigint;
  /** keccak of the EIP-712 domain: what an authorization is signed over */
  separator: string;
}

/**
 * The token's EIP-712 domain: EIP-5267 `eip712Domain()` where the token has it, else `name()` and
 * `version()` (USDC). Either way the result must hash to the token's `DOMAIN_SEPARATOR()`: a domain that
 * does not is refused rather than advertised (a client would sign over it and every proof would fail).
 */
export function tokenDomain(rpcUrl: string, token: string): Promise<TokenDomain> {
  return cached(domains, `${rpcUrl}|${token.toLowerCase()}`, async () => {
    const p = await ethProvider(rpcUrl);
    const call = async (fn: string) =>
      TOKEN_ABI.decodeFunctionResult(fn, await p.call({ to: token, data: TOKEN_ABI.encodeFunctionData(fn) }));
    const separator = (await call('DOMAIN_SEPARATOR'))[0] as string;
    const chainId = (await p.getNetwork()).chainId;
    let name: string;
    let version: string;
    try {
      const d = await call('eip712Domain');
      [name, version] = [d[1] as string, d[2] as string];
    } catch {
      [name, version] = [(await call('name'))[0] as string, (await call('version'))[0] as string];
    }
    const expected = TypedDataEncoder.hashDomain({ name, version, chainId, verifyingContract: getAddress(token) });
    if (expected.toLowerCase() !== separator.toLowerCase())
      throw new Error(`token ${token}: name "${name}" and version "${version}" do not hash to its DOMAIN_SEPARATOR`);
    return { name, version, chainId, separator };
  });
}

const AUTHORIZATION_USED = topicOf('AuthorizationUsed(address,bytes32)');
const TRANSFER = topicOf('Transfer(address,address,uint256)');
/** how far back a used authorization is looked for: x402 authorizations live minutes, not days */
const LOOKBACK_BLOCKS = 50_000;

export interface AuthorizationUse {
  tx_hash: string;
  block: number;
  /** at the rail's confirmation depth */
  final: boolean;
}

/**
 * The transaction in which `from`'s authorization `nonce` was used on the token, if it moved exactly
 * `value` to `to`: the token's `AuthorizationUsed(from, nonce)` log and, right after it in the same
 * transaction, its `Transfer(from, to, value)`. A payer may sign two authorizations with one nonce (to us
 * and to someone else): only the token's record of where the money went tells a front-run of ours apart.
 */
export async function authorizationUse(
  rpcUrl: string,
  token: string,
  a: { from: string; to: string; value: string; nonce: string },
  confirmations: number,
): Promise<AuthorizationUse | null> {
  const p = await ethProvider(rpcUrl);
  const latest = await p.getBlockNumber();
  const logs = await p.getLogs({
    address: token,
    topics: [AUTHORIZATION_USED, zeroPadValue(getAddress(a.from), 32), a.nonce],
    fromBlock: Math.max(0, latest - LOOKBACK_BLOCKS),
    toBlock: latest,
  });
  for (const log of logs) {
    const receipt = await p.getTransactionReceipt(log.transactionHash);
    if (!receipt || receipt.status !== 1) continue;
    const next = receipt.logs.find((l) => l.index === log.index + 1);
    if (
      next &&
      next.address.toLowerCase() === token.toLowerCase() &&
      next.topics[0] === TRANSFER &&
      next.topics[1]?.toLowerCase() === zeroPadValue(getAddress(a.from), 32).toLowerCase() &&
      next.topics[2]?.toLowerCase() === zeroPadValue(getAddress(a.to), 32).toLowerCase() &&
      BigInt(next.data) === BigInt(a.value)
    ) {
      return { tx_hash: log.transactionHash, block: log.blockNumber, final: latest - log.blockNumber + 1 >= Math.max(1, confirmations) };
    }
  }
  return null;
}
