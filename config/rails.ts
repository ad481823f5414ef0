/**
 * The rail list: one exact (chain, network, token) triple per entry. Testnet rails of Ethereum and
 * Solana are enabled; a mainnet rail appears only when its chain's mainnet RPC URL is configured.
 */
export interface Rail {
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  token: 'USDC' | 'ETH' | 'SOL';
  display_name: string;
  decimals: number;
  /** erc20, native or spl */
  kind: string;
  /** the smallest accepted amount, in token units (decimal string; served as a number) */
  min_amount: string;
}

interface RailTemplate {
  chain: Rail['chain'];
  token: Rail['token'];
  decimals: number;
  kind: string;
  min_amount: string;
}

const TEMPLATES: RailTemplate[] = [
  { chain: 'ethereum', token: 'USDC', decimals: 6, kind: 'erc20', min_amount: '0.01' },
  { chain: 'ethereum', token: 'ETH', decimals: 18, kind: 'native', min_amount: '0.00001' },
  { chain: 'solana', token: 'USDC', decimals: 6, kind: 'spl', min_amount: '0.01' },
  { chain: 'solana', token: 'SOL', decimals: 9, kind: 'native', min_amount: '0.0001' },
];

const CHAIN_NAMES: Record<Rail['chain'], string> = { ethereum: 'Ethereum', solana: 'Solana' };

export function buildRails(chains: Record<Rail['chain'], Record<Rail['network'], { rpcUrl: string }>>): Rail[] {
  const rails: Rail[] = [];
  for (const network of ['testnet', 'mainnet'] as const) {
    for (const t of TEMPLATES) {
      if (network === 'mainnet' && !chains[t.chain].mainnet.rpcUrl) continue;
      rails.push({
        chain: t.chain,
        network,
        token: t.token,
        display_name: `${t.token} on ${CHAIN_NAMES[t.chain]}${network === 'testnet' ? ' (testnet)' : ''}`,
        decimals: t.decimals,
        kind: t.kind,
        min_amount: t.min_amount,
      });
    }
  }
  return rails;
}

/** Logic keys off the whole triple, never off the token alone. */
export function findRail(rails: Rail[], chain: string, network: string, token: string): Rail | undefined {
  return rails.find((r) => r.chain === chain && r.network === network && r.token === token);
}

export const railKey = (r: Pick<Rail, 'chain' | 'network' | 'token'>) => `${r.chain}:${r.network}:${r.token}`;
