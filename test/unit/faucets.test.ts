/** Faucet configuration and the local-chain rules (pure). */
import { loadFaucetsConfig } from '../../config/faucets.ts';
import { loadConfig } from '../../config/index.ts';
import { isLocalRpc, planDrip, DripRefusal, faucetList } from '../../lib/faucets/index.ts';

describe('faucets', () => {
  it.each([
    ['http://127.0.0.1:8545', true],
    ['http://localhost:8545', true],
    ['http://[::1]:8899', true],
    ['http://node.localhost', true],
    ['https://sepolia.infura.io/v3/key', false],
    ['http://10.0.0.5:8545', false],
    ['http://127.0.0.1.evil.example', false],
    ['', false],
    ['not a url', false],
  ])('isLocalRpc(%p) is %p', (url, local) => {
    expect(isLocalRpc(url)).toBe(local);
  });

  it('parses drip settings and refuses bad ones', () => {
    expect(loadFaucetsConfig({})).toMatchObject({
      drip: 'auto',
      dripAmounts: { ETH: '1', USDC: '100', SOL: '1' },
      dripIntervalMs: 600_000,
      dripPerMerchant: 20,
    });
    expect(() => loadFaucetsConfig({ FAUCET_DRIP_AMOUNTS: 'ETH=0' })).toThrow(/positive/);
    expect(() => loadFaucetsConfig({ FAUCET_DRIP: 'maybe' })).toThrow(/auto or off/);
    expect(() => loadFaucetsConfig({ FAUCETS: '{"a":1}' })).toThrow(/JSON array/);
    expect(() =>
      loadFaucetsConfig({ FAUCETS: '[{"chain":"ethereum","network":"testnet","token":"ETH","name":"x","url":"javascript:alert(1)"}]' }),
    ).toThrow(/http\(s\) URL/);
  });

  it('plans a drip only on a local chain, with exact smallest units; FAUCET_DRIP=off turns it off', () => {
    const env = {
      ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:8545',
      ETHEREUM_TESTNET_USDC_ADDRESS: `0x${'a'.repeat(40)}`,
      FAUCET_DRIP_AMOUNTS: 'ETH=0.000000000000000001,USDC=1.5',
    };
    const c = loadConfig(env);
    const eth = planDrip(c, { address: `0x${'b'.repeat(40)}`, chain: 'ethereum', token: 'ETH' });
    expect(eth.amountSubunits).toBe(1n);
    expect(eth.intent).toMatchObject({ chain: 'ethereum', kind: 'native', value: '1', from: { role: 'gas', chain: 'ethereum', index: 0 } });
    expect(planDrip(c, { address: `0x${'b'.repeat(40)}`, chain: 'ethereum', token: 'USDC' }).intent).toMatchObject({
      kind: 'erc20',
      amount: '1500000',
    });
    expect(() => planDrip(c, { address: 'x', chain: 'solana', token: 'SOL' })).toThrow(DripRefusal);
    const off = loadConfig({ ...env, FAUCET_DRIP: 'off' });
    expect(() => planDrip(off, { address: `0x${'b'.repeat(40)}`, chain: 'ethereum', token: 'ETH' })).toThrow(
      /only on a local development chain/,
    );
    expect(faucetList(off).some((f) => f.local)).toBe(false);
  });
});
