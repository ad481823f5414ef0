/**
 * The proof forms against real chains: TestUSDC's EIP-3009 on the Hardhat node (an outside key signs,
 * a relayer submits, the nonce binds one challenge), and a Solana memo transfer co-signed by a fee payer
 * on the LiteSVM harness.
 */
import { Contract, TypedDataEncoder, Wallet } from 'ethers';
import { Connection, Keypair, VersionedTransaction } from '@solana/web3.js';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness } from '../harness/solana-rpc.ts';
import { buildChallenge } from '../../lib/x402/challenge.ts';
import { decodeProof, splitSignature, verifyEip3009, verifySolana, type Proof } from '../../lib/x402/proof.ts';
import { signEip3009Proof, buildSolanaProof } from '../../lib/x402/payer.ts';

describe('EIP-3009 on TestUSDC (Hardhat)', () => {
  let node: HardhatNode;
  let usdc: TestUsdc;
  beforeAll(async () => {
    node = await startHardhatNode();
    usdc = await node.deployTestUsdc();
  }, 120_000);
  afterAll(async () => node?.stop());

  it('an outside key authorizes, a relayer submits once; the nonce is the memo hash', async () => {
    const outside = Wallet.createRandom();
    await usdc.mint(outside.address, 5_000_000n);
    const payTo = node.accounts[3].address;
    const challenge = buildChallenge({
      id: 'x402_chain1',
      network: 'testnet',
      amount_subunits: '1250000',
      asset: usdc.address,
      pay_to: payTo,
      resource: '/r',
    });
    const block = await node.provider.getBlock('latest');
    const header = await signEip3009Proof(outside, challenge, {
      chainId: node.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: block!.timestamp,
    });
    const proof = decodeProof(header) as Extract<Proof, { kind: 'eip3009' }>;
    const token = new Contract(usdc.address, usdc.contract.interface, node.wallet(5));
    const separator: string = await token.DOMAIN_SEPARATOR();
    expect(separator).toBe(
      TypedDataEncoder.hashDomain({ name: 'Test USD Coin', version: '2', chainId: node.chainId, verifyingContract: usdc.address }),
    );
    const terms = {
      id: 'x402_chain1',
      chain: 'ethereum' as const,
      network: 'testnet',
      token: 'USDC',
      asset: usdc.address,
      pay_to: payTo,
      amount_subunits: '1250000',
    };
    expect(verifyEip3009(proof, terms, separator, block!.timestamp).payer).toBe(outside.address);
    const a = proof.authorization;
    const { v, r, s } = splitSignature(proof.signature);
    const tx = await token.transferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s);
    await tx.wait();
    expect(await usdc.balanceOf(payTo)).toBe(1_250_000n);
    expect(await token.authorizationState(a.from, a.nonce)).toBe(true);
    await expect(token.transferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s)).rejects.toThrow();
    // a different value under the same signature recovers another signer
    await expect(token.transferWithAuthorization(a.from, a.to, 1n, a.validAfter, a.validBefore, a.nonce, v, r, s)).rejects.toThrow();
  });
});

describe('Solana memo transfer with the gas wallet as fee payer (LiteSVM)', () => {
  let sol: SolanaRpcHarness;
  beforeAll(async () => {
    sol = await startSolanaRpc();
  });
  afterAll(async () => sol?.stop());

  it('the payer signs, the fee payer co-signs and submits; the memo and amount land', async () => {
    const mint = await sol.createMint();
    const gas = Keypair.generate();
    await sol.airdrop(gas.publicKey.toBase58(), 1_000_000_000n);
    const payer = Keypair.generate();
    await sol.mintTo(mint.mint, payer.publicKey.toBase58(), 5_000_000n);
    const merchant = Keypair.generate().publicKey.toBase58();
    await sol.createAssociatedTokenAccount(merchant, mint.mint);
    const conn = new Connection(sol.url, 'confirmed');
    const { blockhash } = await conn.getLatestBlockhash();
    const challenge = buildChallenge({
      id: 'x402_sol1',
      network: 'testnet',
      amount_subunits: '2000000',
      asset: mint.mint,
      pay_to: merchant,
      resource: '/r',
    });
    const proof = decodeProof(
      buildSolanaProof(payer, challenge, { feePayer: gas.publicKey.toBase58(), recentBlockhash: blockhash }),
    ) as Extract<Proof, { kind: 'solana' }>;
    const { tx } = verifySolana(
      proof,
      {
        id: 'x402_sol1',
        chain: 'solana',
        network: 'testnet',
        token: 'USDC',
        asset: mint.mint,
        pay_to: merchant,
        amount_subunits: '2000000',
      },
      gas.publicKey.toBase58(),
    );
    tx.sign([gas]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    expect(await sol.tokenBalance(merchant, mint.mint)).toBe(2_000_000n);
    expect(sol.getLoggedTransaction(sig)?.meta.err).toBeNull();
    expect(VersionedTransaction.deserialize(tx.serialize()).signatures.length).toBe(2);
  });
});
