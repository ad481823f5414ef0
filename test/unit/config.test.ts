import { loadConfig } from '../../config/index.ts';

describe('configuration', () => {
  it('has safe confirmation defaults per network', () => {
    const c = loadConfig({});
    expect(c.chains.ethereum.testnet.confirmations).toBe(2);
    expect(c.chains.ethereum.mainnet.confirmations).toBe(12);
    expect(c.chains.solana.testnet.commitment).toBe('confirmed');
    expect(c.chains.solana.mainnet.commitment).toBe('finalized');
    expect(c.rateLimitPerMinute).toBe(60);
    expect(c.powDifficulty).toBe(20);
    expect(c.port).toBe(3000);
    expect(c.storeUrl).toMatch(/^sqlite:.*data\/service\.db$/);
  });

  it('refuses malformed values instead of guessing', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT/);
    expect(() => loadConfig({ SOLANA_TESTNET_COMMITMENT: 'soon' })).toThrow(/COMMITMENT/);
    expect(() => loadConfig({ SESSION_AMOUNT_LIMIT: '1e5' })).toThrow(/SESSION_AMOUNT_LIMIT/);
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PER_MINUTE/);
  });

  it('lists mainnet rails only for configured chains', () => {
    const rails = loadConfig({ SOLANA_MAINNET_RPC_URL: 'http://127.0.0.1:1' }).rails.map((r) => `${r.chain}:${r.network}:${r.token}`);
    expect(rails).toContain('solana:mainnet:USDC');
    expect(rails).toContain('solana:mainnet:SOL');
    expect(rails.filter((r) => r.startsWith('ethereum:mainnet'))).toEqual([]);
  });
});

describe('X402_MIN_AMOUNTS', () => {
  it('reads <chain>:<network>:<token>=<token units> pairs and refuses anything else', () => {
    expect(loadConfig({}).agents.x402MinAmounts).toEqual({});
    expect(loadConfig({ X402_MIN_AMOUNTS: 'ethereum:mainnet:USDC=1.00, solana:mainnet:USDC=0.05' }).agents.x402MinAmounts).toEqual({
      'ethereum:mainnet:USDC': '1.00',
      'solana:mainnet:USDC': '0.05',
    });
    for (const bad of ['ethereum:mainnet:USDC', 'ethereum:mainnet:USDC=-1', 'ethereum:prod:USDC=1', 'USDC=1'])
      expect(() => loadConfig({ X402_MIN_AMOUNTS: bad })).toThrow(/X402_MIN_AMOUNTS/);
  });
});
