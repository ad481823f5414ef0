/** x402: the challenge (spec fields only, base64 header) and the verification of the proof forms. */
import fc from 'fast-check';
import { TypedDataEncoder, Wallet, getAddress } from 'ethers';
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import { buildChallenge, decodeChallenge, encodeHeader, CHALLENGE_FIELDS, type X402Challenge } from '../../lib/x402/challenge.ts';
import {
  decodeProof,
  verifyEip3009,
  verifySolana,
  memoNonce,
  ProofError,
  associatedTokenAddress,
  type ChallengeTerms,
  type Proof,
} from '../../lib/x402/proof.ts';
import { signEip3009Proof, buildSolanaProof } from '../../lib/x402/payer.ts';

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAY_TO = getAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
const DOMAIN = { name: 'Test USD Coin', version: '2', chainId: 31337, verifyingContract: TOKEN };
const SEPARATOR = TypedDataEncoder.hashDomain(DOMAIN);
const NOW = 1_800_000_000;

const ethTerms: ChallengeTerms = {
  id: 'x402_abc',
  chain: 'ethereum',
  network: 'testnet',
  token: 'USDC',
  asset: TOKEN,
  pay_to: PAY_TO,
  amount_subunits: '1500000',
};
const ethChallenge = buildChallenge({
  id: ethTerms.id,
  network: 'testnet',
  amount_subunits: '1500000',
  asset: TOKEN,
  pay_to: PAY_TO,
  resource: 'https://api.example/report',
});

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProofError) return e.reason;
    throw e;
  }
  return 'ok';
}

describe('x402 challenge', () => {
  it('has only the spec fields, all strings, memo = the challenge id', () => {
    const c = buildChallenge({
      id: 'x402_1',
      network: 'testnet',
      amount_subunits: '10',
      asset: 'SOL',
      pay_to: 'P',
      resource: '/r',
      description: 'a report',
    });
    expect(Object.keys(c).every((k) => (CHALLENGE_FIELDS as readonly string[]).includes(k))).toBe(true);
    expect(Object.values(c).every((v) => typeof v === 'string')).toBe(true);
    expect(c).toMatchObject({
      version: '1',
      scheme: 'exact',
      memo: 'x402_1',
      amount: '10',
      maxAmountRequired: '10',
      payTo: 'P',
      recipient: 'P',
    });
  });

  it('header round-trips and drops unknown fields (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), fc.string(), (memo, resource, extra) => {
        const c: X402Challenge = { memo, resource };
        const back = decodeChallenge(encodeHeader({ ...c, extra }));
        return back !== null && back.memo === memo && back.resource === resource && !('extra' in back);
      }),
    );
    expect(decodeChallenge('not base64!')).toBeNull();
    expect(decodeChallenge(Buffer.from('[1]').toString('base64'))).toBeNull();
  });
});

describe('EIP-3009 proof', () => {
  const payer = Wallet.createRandom();
  const sign = (c: X402Challenge = ethChallenge, now = NOW) =>
    signEip3009Proof(payer, c, { chainId: 31337, tokenName: DOMAIN.name, tokenVersion: DOMAIN.version, nowSeconds: now });
  const eip = (h: string) => decodeProof(h) as Extract<Proof, { kind: 'eip3009' }>;

  it('verifies: payer, nonce = keccak256(memo), proof key', async () => {
    const p = eip(await sign());
    expect(p.authorization.nonce).toBe(memoNonce('x402_abc'));
    const ok = verifyEip3009(p, ethTerms, SEPARATOR, NOW);
    expect(ok.payer).toBe(payer.address);
    expect(ok.proof_key).toContain(memoNonce('x402_abc'));
  });

  it('refuses wrong amount, payee, memo, network, asset, validity window and signature', async () => {
    const p = eip(await sign());
    expect(reason(() => verifyEip3009(p, { ...ethTerms, amount_subunits: '1500001' }, SEPARATOR, NOW))).toBe('wrong_amount');
    expect(reason(() => verifyEip3009(p, { ...ethTerms, pay_to: TOKEN }, SEPARATOR, NOW))).toBe('wrong_payee');
    expect(reason(() => verifyEip3009(p, { ...ethTerms, id: 'x402_other' }, SEPARATOR, NOW))).toBe('memo_mismatch');
    expect(reason(() => verifyEip3009(p, { ...ethTerms, network: 'mainnet' }, SEPARATOR, NOW))).toBe('wrong_network');
    expect(reason(() => verifyEip3009(p, { ...ethTerms, token: 'ETH' }, SEPARATOR, NOW))).toBe('wrong_asset');
    expect(reason(() => verifyEip3009(p, ethTerms, SEPARATOR, NOW - 120))).toBe('not_yet_valid');
    expect(reason(() => verifyEip3009(p, ethTerms, SEPARATOR, NOW + 400))).toBe('authorization_expired');
    // another token's domain: the signature recovers someone else
    const other = TypedDataEncoder.hashDomain({ ...DOMAIN, verifyingContract: PAY_TO });
    expect(reason(() => verifyEip3009(p, ethTerms, other, NOW))).toBe('bad_signature');
    const tampered = { ...p, authorization: { ...p.authorization, from: PAY_TO } };
    expect(reason(() => verifyEip3009(tampered, ethTerms, SEPARATOR, NOW))).toBe('bad_signature');
    const nonceForOther = { ...p, authorization: { ...p.authorization, nonce: memoNonce('x402_other') } };
    expect(reason(() => verifyEip3009(nonceForOther, ethTerms, SEPARATOR, NOW))).toBe('memo_mismatch');
  });

  it('malformed headers are refused as malformed', () => {
    for (const h of [
      '',
      'x',
      encodeHeader({}),
      encodeHeader({
        scheme: 'exact',
        memo: 'm',
        network: 'testnet',
        chain: 'ethereum',
        payload: { signature: '0x', authorization: { from: 'nope' } },
      }),
      encodeHeader({
        scheme: 'exact',
        memo: 'm',
        network: 'testnet',
        chain: 'ethereum',
        payload: {
          signature: '0x11',
          authorization: {
            from: PAY_TO,
            to: PAY_TO,
            value: '1',
            validAfter: '0',
            validBefore: (1n << 256n).toString(),
            nonce: memoNonce('m'),
          },
        },
      }),
      encodeHeader({ scheme: 'other', memo: 'm', payload: {} }),
      encodeHeader({ scheme: 'exact', memo: 'm', network: 'testnet', chain: 'tron', payload: {} }),
    ]) {
      expect(reason(() => decodeProof(h))).toBe('malformed');
    }
  });
});

describe('Solana proof', () => {
  const gas = Keypair.generate();
  const payer = Keypair.generate();
  const mint = Keypair.generate().publicKey.toBase58();
  const payTo = Keypair.generate().publicKey.toBase58();
  const terms: ChallengeTerms = {
    id: 'x402_sol',
    chain: 'solana',
    network: 'testnet',
    token: 'USDC',
    asset: mint,
    pay_to: payTo,
    amount_subunits: '2500000',
  };
  const challenge = buildChallenge({
    id: terms.id,
    network: 'testnet',
    amount_subunits: terms.amount_subunits,
    asset: mint,
    pay_to: payTo,
    resource: '/r',
  });
  const blockhash = Keypair.generate().publicKey.toBase58();
  const sol = (h: string) => decodeProof(h) as Extract<Proof, { kind: 'solana' }>;

  it('verifies a transferChecked with the memo, fee payer = gas wallet (unsigned by it)', () => {
    const ok = verifySolana(
      sol(buildSolanaProof(payer, challenge, { feePayer: gas.publicKey.toBase58(), recentBlockhash: blockhash })),
      terms,
      gas.publicKey.toBase58(),
    );
    expect(ok.payer).toBe(payer.publicKey.toBase58());
    // the gas wallet co-signs and the transaction is then complete
    ok.tx.sign([gas]);
    expect(VersionedTransaction.deserialize(ok.tx.serialize()).signatures.every((s) => s.some((b) => b !== 0))).toBe(true);
  });

  it('verifies a SOL transfer', () => {
    const c = buildChallenge({ id: 'x402_sol', network: 'testnet', amount_subunits: '1000', asset: 'SOL', pay_to: payTo, resource: '/r' });
    const ok = verifySolana(
      sol(buildSolanaProof(payer, c, { feePayer: gas.publicKey.toBase58(), recentBlockhash: blockhash })),
      { ...terms, token: 'SOL', asset: 'SOL', amount_subunits: '1000' },
      gas.publicKey.toBase58(),
    );
    expect(ok.payer).toBe(payer.publicKey.toBase58());
  });

  it('refuses another fee payer, the gas wallet inside an instruction, wrong amount/payee/mint/memo and bad signatures', () => {
    const gasAddr = gas.publicKey.toBase58();
    const h = buildSolanaProof(payer, challenge, { feePayer: gasAddr, recentBlockhash: blockhash });
    expect(
      reason(() =>
        verifySolana(
          sol(buildSolanaProof(payer, challenge, { feePayer: payer.publicKey.toBase58(), recentBlockhash: blockhash })),
          terms,
          gasAddr,
        ),
      ),
    ).toBe('fee_payer_mismatch');
    expect(reason(() => verifySolana(sol(h), { ...terms, amount_subunits: '1' }, gasAddr))).toBe('wrong_amount');
    expect(reason(() => verifySolana(sol(h), { ...terms, pay_to: payer.publicKey.toBase58() }, gasAddr))).toBe('wrong_payee');
    expect(reason(() => verifySolana(sol(h), { ...terms, asset: payTo }, gasAddr))).toBe('wrong_asset');
    expect(reason(() => verifySolana(sol(h), { ...terms, id: 'x402_zzz' }, gasAddr))).toBe('memo_mismatch');
    // the gas wallet as the token authority (it would pay): refused
    const asGas = buildSolanaProof(gas, challenge, { feePayer: gasAddr, recentBlockhash: blockhash });
    expect(reason(() => verifySolana(sol(asGas), terms, gasAddr))).toBe('fee_payer_in_instruction');
    // a flipped byte in the payer's signature
    const p = sol(h);
    const tx = VersionedTransaction.deserialize(Buffer.from(p.transaction, 'base64'));
    tx.signatures[1][0] ^= 1;
    expect(reason(() => verifySolana({ ...p, transaction: Buffer.from(tx.serialize()).toString('base64') }, terms, gasAddr))).toBe(
      'bad_signature',
    );
    expect(associatedTokenAddress(payTo, mint)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });
});
