/**
 * RPC clients for the money-out side (gas wallets, broadcaster, sweeps, reconciliation), one per RPC URL
 * and process, and the balance reads they share. The chain id of an Ethereum node is asked once.
 */
import { Contract, FetchRequest, JsonRpcProvider, getAddress } from 'ethers';
import { Connection, PublicKey } from '@solana/web3.js';

const providers = new Map<string, Promise<JsonRpcProvider>>();
const connections = new Map<string, Connection>();

import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID } from './solana/parse.ts';
import { PromptJsonRpcProvider } from './ethereum/prompt-provider.ts';

export { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID };

export function ethProvider(rpcUrl: string, timeoutMs = 15_000): Promise<JsonRpcProvider> {
  let p = providers.get(rpcUrl);
  if (!p) {
    p = (async () => {
      const req = new FetchRequest(rpcUrl);
      req.timeout = timeoutMs;
      const probe = new JsonRpcProvider(req, undefined, { staticNetwork: true, cacheTimeout: -1 });
      try {
        const chainId = Number(await probe.send('eth_chainId', []));
        // sends each turn's calls at once (ethers holds every call on a timer to batch it with later ones)
        return new PromptJsonRpcProvider(req, chainId, { staticNetwork: true, cacheTimeout: -1 });
      } finally {
        probe.destroy();
      }
    })();
    p.catch(() => providers.delete(rpcUrl));
    providers.set(rpcUrl, p);
  }
  return p;
}

export function solConnection(rpcUrl: string): Connection {
  let c = connections.get(rpcUrl);
  if (!c) {
    c = new Connection(rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
    connections.set(rpcUrl, c);
  }
  return c;
}

/** Drops cached clients (tests stop their chains between cases). */
export async function closeClients(): Promise<void> {
  const ps = [...providers.values()];
  providers.clear();
  connections.clear();
  for (const p of ps) {
    try {
      (await p).destroy();
    } catch {
      /* never connected */
    }
  }
}

/** The associated token account of owner for mint (classic SPL Token program). */
export function associatedTokenAddress(owner: string, mint: string): string {
  const [pda] = PublicKey.findProgramAddressSync(
    [new PublicKey(owner).toBuffer(), new PublicKey(TOKEN_PROGRAM_ID).toBuffer(), new PublicKey(mint).toBuffer()],
    new PublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
  );
  return pda.toBase58();
}

/**
 * An RPC error as text that is safe to store and log: URLs are cut out (a provider's URL often holds its
 * API key), and the text is bounded.
 */
export function rpcErrorText(e: unknown, max = 300): string {
  return String((e as Error)?.message ?? e)
    .replace(/\b(?:https?|wss?):\/\/[^\s"',)]+/gi, '<rpc url>')
    .slice(0, max);
}

const ERC20_BALANCE = ['function balanceOf(address) view returns (uint256)'];

/** ETH or SOL in wei or lamports. */
export async function nativeBalance(chain: 'ethereum' | 'solana', rpcUrl: string, address: string): Promise<bigint> {
  if (chain === 'ethereum') return (await ethProvider(rpcUrl)).getBalance(getAddress(address));
  return BigInt(await solConnection(rpcUrl).getBalance(new PublicKey(address), 'confirmed'));
}

/** USDC in subunits: the ERC-20 balance, or the owner's associated token account (0 when it does not exist). */
export async function tokenBalance(chain: 'ethereum' | 'solana', rpcUrl: string, token: string, owner: string): Promise<bigint> {
  if (chain === 'ethereum') {
    const c = new Contract(getAddress(token), ERC20_BALANCE, await ethProvider(rpcUrl));
    return BigInt(await c.getFunction('balanceOf')(getAddress(owner)));
  }
  const conn = solConnection(rpcUrl);
  const ata = new PublicKey(associatedTokenAddress(owner, token));
  const info = await conn.getAccountInfo(ata, 'confirmed');
  if (!info) return 0n;
  // SPL token account layout: mint (32) owner (32) amount (u64 LE)
  return Buffer.from(info.data).readBigUInt64LE(64);
}
