import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { HDNodeWallet, getAddress } from 'ethers';
import {
  AddressDeriver,
  AddressIndexAllocator,
  checksummed,
  ed25519PublicKey,
  explorerUrl,
  loadSeedPhrase,
  paymentUri,
  slip10DerivePath,
} from '../../lib/addresses/addresses.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { SESSIONS_COLLECTIONS } from '../../lib/store/schema/sessions.ts';

const HARDHAT = 'test test test test test test test test test test test junk';

describe("Ethereum BIP-44 m/44'/60'/0'/0/i", () => {
  const d = new AddressDeriver(HARDHAT);

  it('matches the well-known vectors of the "test … junk" mnemonic', () => {
    expect(d.ethereum(0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(d.ethereum(1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(d.ethereum(2)).toBe('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC');
  });

  it('agrees with ethers HDNodeWallet on many indexes (EIP-55 checksummed)', () => {
    for (const i of [3, 7, 19, 20, 21, 100, 1234, 65_535, 2 ** 31 - 1]) {
      expect(d.ethereum(i)).toBe(HDNodeWallet.fromPhrase(HARDHAT, undefined, `m/44'/60'/0'/0/${i}`).address);
    }
  });

  it('checksums as ethers getAddress does (EIP-55), whatever the 20 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const lower = Buffer.from(bytes).toString('hex');
        expect(checksummed(lower)).toBe(getAddress(`0x${lower}`));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses indexes outside [0, 2^31)', () => {
    expect(() => d.ethereum(-1)).toThrow();
    expect(() => d.ethereum(2 ** 31)).toThrow();
    expect(() => d.ethereum(1.5)).toThrow();
  });
});

describe('SLIP-0010 ed25519', () => {
  // SLIP-0010 test vector 1 for ed25519 (seed 000102030405060708090a0b0c0d0e0f)
  const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const vectors: Array<[string, string, string, string]> = [
    [
      'm',
      '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb',
      '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7',
      'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed',
    ],
    [
      "m/0'",
      '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69',
      '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3',
      '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c',
    ],
    [
      "m/0'/1'",
      'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14',
      'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2',
      '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187',
    ],
    [
      "m/0'/1'/2'",
      '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c',
      '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9',
      'ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1',
    ],
    [
      "m/0'/1'/2'/2'",
      '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc',
      '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662',
      '8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c',
    ],
  ];

  it.each(vectors)('test vector 1, chain %s', (path, chainCode, priv, pub) => {
    const node = slip10DerivePath(seed, path);
    expect(node.chainCode.toString('hex')).toBe(chainCode);
    expect(node.key.toString('hex')).toBe(priv);
    expect(ed25519PublicKey(node.key).toString('hex')).toBe(pub);
  });

  it('refuses non-hardened levels', () => {
    expect(() => slip10DerivePath(seed, 'm/0')).toThrow(/hardened/);
  });

  it("derives Solana m/44'/501'/i'/0' as wallets do (Trezor fixture, mnemonic \"all … all\")", () => {
    const d = new AddressDeriver('all all all all all all all all all all all all');
    expect(d.solana(0)).toBe('14CCvQzQzHCVgZM3j9soPnXuJXh1RmCfwLVUcdfbZVBS');
  });

  it('gives every index its own base58 address', () => {
    const d = new AddressDeriver(HARDHAT);
    const seen = new Set(Array.from({ length: 50 }, (_, i) => d.solana(i)));
    expect(seen.size).toBe(50);
    for (const a of seen) expect(a).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });
});

describe('key material', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'seed-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses SEED_MNEMONIC when set and refuses an invalid one without echoing it', () => {
    expect(loadSeedPhrase(dir, { SEED_MNEMONIC: `  ${HARDHAT.replace(/ /g, '   ')} ` })).toEqual({ phrase: HARDHAT, source: 'env' });
    let message = '';
    try {
      loadSeedPhrase(dir, { SEED_MNEMONIC: 'secret words that are not a mnemonic' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/SEED_MNEMONIC/);
    expect(message).not.toMatch(/secret words/);
  });

  it('creates a 24-word seed once in DATA_DIR/seed with mode 0600 and reads it back', () => {
    const first = loadSeedPhrase(dir, {});
    expect(first.source).toBe('created');
    expect(first.phrase.split(' ')).toHaveLength(24);
    expect(statSync(join(dir, 'seed')).mode & 0o777).toBe(0o600);
    const again = loadSeedPhrase(dir, {});
    expect(again).toEqual({ phrase: first.phrase, source: 'file' });
  });

  it('several processes starting at once agree on one seed', () => {
    const script = `import { loadSeedPhrase, AddressDeriver } from ${JSON.stringify(join(process.cwd(), 'lib/addresses/addresses.ts'))};
      const s = loadSeedPhrase(process.argv[2], {}); console.log(new AddressDeriver(s.phrase).fingerprint);`;
    const file = join(dir, 'probe.mts');
    writeFileSync(file, script);
    const node = join(process.cwd(), 'node_modules/.bin/node');
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<string>((resolve, reject) => {
          const c = spawn(node, [file, join(dir, 'data')], { cwd: process.cwd() });
          let out = '';
          c.stdout.on('data', (b: Buffer) => {
            out += b;
          });
          c.on('exit', (code: number) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}`))));
        }),
    );
    return Promise.all(runs).then((prints) => {
      expect(new Set(prints).size).toBe(1);
      const phrase = readFileSync(join(dir, 'data', 'seed'), 'utf8').trim();
      expect(new AddressDeriver(phrase).fingerprint).toBe(prints[0]);
    });
  });

  it('refuses a seed file that is not a mnemonic', () => {
    writeFileSync(join(dir, 'seed'), 'garbage');
    expect(() => loadSeedPhrase(dir, {})).toThrow(/valid BIP-39/);
  });
});

describe('address index sequence', () => {
  it('never hands out an index twice, across allocators sharing one store', async () => {
    const store = new SqliteStore(':memory:');
    await store.ensure(SESSIONS_COLLECTIONS);
    const a = new AddressIndexAllocator(store, 7);
    const b = new AddressIndexAllocator(store, 5);
    const got = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).next('ethereum')));
    expect(new Set(got).size).toBe(200);
    const sol = await Promise.all(Array.from({ length: 10 }, () => a.next('solana')));
    expect(new Set(sol).size).toBe(10);
    expect(Math.min(...sol)).toBe(0); // one sequence per chain
    await store.close();
  });
});

describe('payment links', () => {
  const base = { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', token_contract: '' };

  it('EIP-681: plain value form for ETH, ERC-20 transfer form for USDC with its contract', () => {
    expect(
      paymentUri({ ...base, chain: 'ethereum', network: 'testnet', token: 'ETH', decimals: 18, amount_subunits: '1500000000000000000' }),
    ).toBe('ethereum:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266@11155111?value=1500000000000000000');
    expect(
      paymentUri({
        ...base,
        chain: 'ethereum',
        network: 'mainnet',
        token: 'USDC',
        decimals: 6,
        amount_subunits: '12500000',
        token_contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      }),
    ).toBe(
      'ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@1/transfer?address=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266&uint256=12500000',
    );
    // without a configured contract, no amount that a wallet could take for ETH
    expect(paymentUri({ ...base, chain: 'ethereum', network: 'testnet', token: 'USDC', decimals: 6, amount_subunits: '1' })).toBe(
      'ethereum:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266@11155111',
    );
  });

  it('Solana Pay: amount in token units, spl-token for USDC', () => {
    const address = '14CCvQzQzHCVgZM3j9soPnXuJXh1RmCfwLVUcdfbZVBS';
    expect(
      paymentUri({
        address,
        token_contract: '',
        chain: 'solana',
        network: 'testnet',
        token: 'SOL',
        decimals: 9,
        amount_subunits: '1500000',
      }),
    ).toBe(`solana:${address}?amount=0.0015`);
    expect(
      paymentUri({
        address,
        token_contract: 'MintAddr111',
        chain: 'solana',
        network: 'testnet',
        token: 'USDC',
        decimals: 6,
        amount_subunits: '12500000',
      }),
    ).toBe(`solana:${address}?amount=12.5&spl-token=MintAddr111`);
    expect(
      paymentUri({
        address,
        token_contract: '',
        chain: 'solana',
        network: 'testnet',
        token: 'USDC',
        decimals: 6,
        amount_subunits: '12500000',
      }),
    ).toBe(`solana:${address}`);
  });

  it('explorer links of the address, or of a transaction', () => {
    expect(explorerUrl({ chain: 'ethereum', network: 'testnet', address: base.address })).toBe(
      `https://sepolia.etherscan.io/address/${base.address}`,
    );
    expect(explorerUrl({ chain: 'ethereum', network: 'mainnet', address: base.address }, '0xabc')).toBe('https://etherscan.io/tx/0xabc');
    expect(explorerUrl({ chain: 'solana', network: 'testnet', address: 'Abc' })).toBe(
      'https://explorer.solana.com/address/Abc?cluster=devnet',
    );
    expect(explorerUrl({ chain: 'solana', network: 'mainnet', address: 'Abc' }, 'sig')).toBe('https://explorer.solana.com/tx/sig');
  });
});
