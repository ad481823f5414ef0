/** Key roles live on separate derivation accounts; deposit keys are the session addresses' keys. */
import { Wallet } from 'ethers';
import { AddressDeriver } from '../../lib/addresses/addresses.ts';
import { KeyDeriver, keyPath } from '../../lib/chains/keys.ts';
import { signTransaction } from '../../lib/chains/sign.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';

const PHRASE = 'test test test test test test test test test test test junk';

describe('chain keys', () => {
  const keys = new KeyDeriver(PHRASE);
  const sessions = new AddressDeriver(PHRASE);

  it('derives the session deposit addresses for the deposit role', () => {
    for (const i of [0, 1, 7]) {
      expect(keys.address({ role: 'deposit', chain: 'ethereum', index: i })).toBe(sessions.ethereum(i));
      expect(keys.address({ role: 'deposit', chain: 'solana', index: i })).toBe(sessions.solana(i));
    }
    // Hardhat's account 0 is m/44'/60'/0'/0/0 of this mnemonic
    expect(new Wallet(Buffer.from(keys.privateKey({ role: 'deposit', chain: 'ethereum', index: 0 })).toString('hex')).address).toBe(
      '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    );
  });

  it('puts wallets and gas wallets on their own accounts, one gas wallet per network', () => {
    expect(keyPath({ role: 'wallet', chain: 'ethereum', index: 3 })).toBe("m/44'/60'/1'/0/3");
    expect(keyPath(gasWalletRef('ethereum', 'mainnet'))).toBe("m/44'/60'/2'/0/1");
    expect(keyPath(gasWalletRef('solana', 'testnet'))).toBe("m/44'/501'/0'/2'");
    const addresses = new Set<string>();
    for (const chain of ['ethereum', 'solana'] as const) {
      for (let i = 0; i < 5; i++) {
        addresses.add(keys.address({ role: 'deposit', chain, index: i }));
        addresses.add(keys.address({ role: 'wallet', chain, index: i }));
      }
      addresses.add(keys.address(gasWalletRef(chain, 'testnet')));
      addresses.add(keys.address(gasWalletRef(chain, 'mainnet')));
    }
    expect(addresses.size).toBe(24);
  });

  it('signs an Ethereum legacy transaction that recovers to the key address', async () => {
    const ref = gasWalletRef('ethereum', 'testnet');
    const { raw, hash } = signTransaction(keys, {
      chain: 'ethereum',
      key: ref,
      tx: { chainId: 31337, nonce: 4, to: sessions.ethereum(1), value: '1000', data: '0x', gasLimit: '21000', gasPrice: '2000000000' },
    });
    const { Transaction } = await import('ethers');
    const tx = Transaction.from(raw);
    expect(tx.from).toBe(keys.address(ref));
    expect(tx.hash).toBe(hash);
    expect(tx.nonce).toBe(4);
    expect(tx.type).toBe(0);
  });
});

describe('RPC error text', () => {
  it('never carries the RPC URL (a provider key lives in it)', async () => {
    const { rpcErrorText } = await import('../../lib/chains/clients.ts');
    const e = new Error(
      'request timeout (url="https://eth-mainnet.example.com/v2/SECRETKEY123", code=TIMEOUT) and wss://sol.example/k?api-key=abc',
    );
    const text = rpcErrorText(e);
    expect(text).not.toMatch(/SECRETKEY123|api-key=abc|example/);
    expect(text).toContain('<rpc url>');
    expect(rpcErrorText('x'.repeat(1000)).length).toBe(300);
  });
});
