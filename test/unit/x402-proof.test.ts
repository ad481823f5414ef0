/** x402: the challenge (spec fields only, base64 header) and the verification of the proof forms. */
import fc from 'fast-check';
import { TypedDataEncoder, Wallet, getAddress } from 'ethers';
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { buildChallenge, decodeChallenge, encodeHeader, CHALLENGE_FIELDS, type X402Challenge } from '../../lib/x402/challenge.ts';
import {
  decodeProof,
  verifyEip3009,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  MEMO_PROGRAMS,
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

  it("verifies the spec's proof: payer, nonce = keccak256(memo), proof key", async () => {
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
    // the nonce is signed: changing it breaks the signature
    const nonceForOther = { ...p, authorization: { ...p.authorization, nonce: memoNonce('x402_other') } };
    expect(reason(() => verifyEip3009(nonceForOther, ethTerms, SEPARATOR, NOW))).toBe('bad_signature');
  });

  it('accepts any nonce (what x402 v2 clients sign); the proof key is per token, payer and nonce (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), async (bytes) => {
        const nonce = `0x${Buffer.from(bytes).toString('hex')}`;
        const authorization = { from: payer.address, to: PAY_TO, value: '1500000', validAfter: '0', validBefore: String(NOW + 60), nonce };
        const signature = await payer.signTypedData(DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
        const p = decodeProof(
          encodeHeader({
            x402Version: 2,
            accepted: {
              scheme: 'exact',
              network: 'eip155:31337',
              amount: '1500000',
              asset: TOKEN,
              payTo: PAY_TO,
              maxTimeoutSeconds: 60,
              extra: { challengeId: 'x402_abc' },
            },
            payload: { signature, authorization },
          }),
        ) as Extract<Proof, { kind: 'eip3009' }>;
        expect([p.wire, p.memo, p.network]).toEqual(['v2', 'x402_abc', 'eip155:31337']);
        const ok = verifyEip3009(p, { ...ethTerms, x402_network: 'eip155:31337' }, SEPARATOR, NOW);
        return ok.payer === payer.address && ok.proof_key.endsWith(`:${payer.address.toLowerCase()}:${nonce}`);
      }),
      { numRuns: 10 },
    );
  });

  it('a v2 payload names its challenge in accepted.extra.challengeId and its network in CAIP-2', async () => {
    const spec = eip(await sign());
    const v2 = (accepted: Record<string, unknown>) =>
      decodeProof(encodeHeader({ x402Version: 2, accepted, payload: { signature: spec.signature, authorization: spec.authorization } }));
    const accepted = { scheme: 'exact', network: 'eip155:31337', amount: '1500000', asset: TOKEN, payTo: PAY_TO, maxTimeoutSeconds: 60 };
    const terms = { ...ethTerms, x402_network: 'eip155:31337' };
    const other = v2({ ...accepted, extra: { challengeId: 'x402_other' } }) as Extract<Proof, { kind: 'eip3009' }>;
    expect(reason(() => verifyEip3009(other, terms, SEPARATOR, NOW))).toBe('memo_mismatch');
    const elsewhere = v2({ ...accepted, network: 'eip155:1', extra: { challengeId: 'x402_abc' } }) as Extract<Proof, { kind: 'eip3009' }>;
    expect(reason(() => verifyEip3009(elsewhere, terms, SEPARATOR, NOW))).toBe('wrong_network');
    // no challenge id (a facilitator's payment, or v1): the terms alone decide
    const bare = v2(accepted) as Extract<Proof, { kind: 'eip3009' }>;
    expect(bare.memo).toBeNull();
    expect(verifyEip3009(bare, terms, SEPARATOR, NOW).payer).toBe(payer.address);
    const v1 = decodeProof(
      encodeHeader({
        x402Version: 1,
        scheme: 'exact',
        network: 'base-sepolia',
        payload: { signature: spec.signature, authorization: spec.authorization },
      }),
    );
    expect([v1.wire, v1.memo]).toEqual(['v1', null]);
    for (const bad of [{ ...accepted, scheme: 'upto' }, { ...accepted, network: 'testnet' }, null])
      expect(
        reason(() =>
          decodeProof(
            encodeHeader({ x402Version: 2, accepted: bad, payload: { signature: spec.signature, authorization: spec.authorization } }),
          ),
        ),
      ).toBe('malformed');
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

  /** the proof's transaction with its instructions filtered, signed again by the payer */
  function rebuilt(h: string, keep: (programId: string, data: Uint8Array) => boolean, add: TransactionInstruction[] = []): string {
    const p = sol(h);
    const msg = TransactionMessage.decompile(VersionedTransaction.deserialize(Buffer.from(p.transaction, 'base64')).message);
    msg.instructions = [...msg.instructions.filter((ix) => keep(ix.programId.toBase58(), ix.data)), ...add];
    const tx = new VersionedTransaction(msg.compileToV0Message());
    tx.sign([payer]);
    return Buffer.from(tx.serialize()).toString('base64');
  }

  it('requires a bounded compute-unit limit (the gas wallet pays for every unit)', () => {
    const gasAddr = gas.publicKey.toBase58();
    const h = buildSolanaProof(payer, challenge, { feePayer: gasAddr, recentBlockhash: blockhash });
    const noLimit = rebuilt(h, (program) => program !== ComputeBudgetProgram.programId.toBase58());
    expect(reason(() => verifySolana({ ...sol(h), transaction: noLimit }, terms, gasAddr))).toBe('compute_limit_missing');
    const high = rebuilt(h, (program) => program !== ComputeBudgetProgram.programId.toBase58(), [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 }),
    ]);
    expect(reason(() => verifySolana({ ...sol(h), transaction: high }, terms, gasAddr))).toBe('unexpected_instruction');
    const twice = rebuilt(h, () => true, [ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 })]);
    expect(reason(() => verifySolana({ ...sol(h), transaction: twice }, terms, gasAddr))).toBe('unexpected_instruction');
  });

  it('a v2 payer may write any memo (one, bounded); the spec proof must carry the challenge id', () => {
    const gasAddr = gas.publicKey.toBase58();
    const h = buildSolanaProof(payer, challenge, { feePayer: gasAddr, recentBlockhash: blockhash });
    const memo = (text: string) =>
      new TransactionInstruction({ programId: new PublicKey([...MEMO_PROGRAMS][0]), keys: [], data: Buffer.from(text) });
    const randomMemo = rebuilt(h, (program) => !MEMO_PROGRAMS.has(program), [memo('a1b2c3d4e5f60718293a4b5c6d7e8f90')]);
    const asV2 = { ...sol(h), wire: 'v2' as const, network: 'solana:x', memo: terms.id, transaction: randomMemo };
    expect(verifySolana(asV2, { ...terms, x402_network: 'solana:x' }, gasAddr).payer).toBe(payer.publicKey.toBase58());
    expect(reason(() => verifySolana({ ...sol(h), transaction: randomMemo }, terms, gasAddr))).toBe('memo_mismatch');
    const long = rebuilt(h, (program) => !MEMO_PROGRAMS.has(program), [memo('x'.repeat(257))]);
    expect(reason(() => verifySolana({ ...asV2, transaction: long }, { ...terms, x402_network: 'solana:x' }, gasAddr))).toBe(
      'memo_mismatch',
    );
  });
});
