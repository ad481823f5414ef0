// The local chains the listeners are tested against: a real Hardhat (EDR) node with TestUSDC
// compiled from contracts/TestUSDC.sol, and the LiteSVM-backed Solana JSON-RPC harness, read back
// through lib/chains/ethereum/erc20.ts and lib/chains/solana/parse.ts with the clients the listeners use
// (ethers, @solana/web3.js 1.x).
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Wallet, getAddress } from 'ethers';
import { getLogsChunked, getTransfers, TRANSFER_TOPIC } from '../../lib/chains/ethereum/erc20.ts';
import { extractSolanaDeposits, type ParsedTransactionLike } from '../../lib/chains/solana/parse.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { LAMPORTS_PER_SOL, startSolanaRpc, type MintInfo, type SolanaRpcHarness } from '../harness/solana-rpc.ts';

jest.setTimeout(120_000);

describe('Hardhat node harness + TestUSDC + lib/chains/erc20', () => {
  let node: HardhatNode;
  let usdc: TestUsdc;

  beforeAll(async () => {
    node = await startHardhatNode();
    usdc = await node.deployTestUsdc();
    await usdc.mint(node.accounts[1]!.address, 100_000_000n); // 100 USDC
  });

  afterAll(async () => {
    await node?.stop();
  });

  test('the node is a real chain with funded Hardhat accounts and the token deployed from source', async () => {
    expect(node.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(await node.rpc<string>('eth_chainId'))).toBe(31337);
    expect(node.accounts[0]!.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(await node.provider.getBalance(node.accounts[19]!.address)).toBe(10_000n * 10n ** 18n);
    expect(await usdc.contract.getFunction('decimals')()).toBe(6n);
    expect(await usdc.contract.getFunction('symbol')()).toBe('USDC');
    expect(await usdc.balanceOf(node.accounts[1]!.address)).toBe(100_000_000n);
    expect((await node.provider.getCode(usdc.address)).length).toBeGreaterThan(100);
  });

  test('a transfer is read back as a decoded Transfer log, at its block and log index', async () => {
    const session = Wallet.createRandom().address;
    const { receipt } = await usdc.transfer(1, session, 2_500_000n);
    expect(receipt).not.toBeNull();
    const head = await node.blockNumber();
    const transfers = (await getTransfers(node.provider, usdc.address, usdc.deployBlock, head)).filter((t) => t.to === session);
    expect(transfers).toEqual([
      {
        token: getAddress(usdc.address),
        from: node.accounts[1]!.address,
        to: session,
        amount: '2500000',
        blockNumber: receipt!.blockNumber,
        blockHash: receipt!.blockHash,
        transactionHash: receipt!.hash,
        logIndex: 0,
        removed: false,
      },
    ]);
    expect(await usdc.balanceOf(session)).toBe(2_500_000n);
  });

  test('one transaction with several Transfer logs: same tx hash, distinct log indexes', async () => {
    const a = Wallet.createRandom().address;
    const b = Wallet.createRandom().address;
    const { receipt } = await usdc.transferBatch(1, [a, b], [1_000_000n, 250_000n]);
    const transfers = await getTransfers(node.provider, usdc.address, receipt!.blockNumber, receipt!.blockNumber, { toAddresses: [a, b] });
    expect(transfers.map((t) => [t.to, t.amount, t.logIndex, t.transactionHash])).toEqual([
      [a, '1000000', 0, receipt!.hash],
      [b, '250000', 1, receipt!.hash],
    ]);
  });

  test('getLogsChunked walks the real node in bounded ranges', async () => {
    const head = await node.blockNumber();
    const chunks: [number, number][] = [];
    const logs = await getLogsChunked(node.provider, { address: usdc.address, topics: [TRANSFER_TOPIC] }, 0, head, {
      maxBlockRange: 2,
      onChunk: (from, to) => {
        chunks.push([from, to]);
      },
    });
    expect(chunks.length).toBe(Math.ceil((head + 1) / 2));
    // mint + transfer + batch(2) so far: every Transfer log of the token, each once
    expect(logs.length).toBe(4);
    expect(new Set(logs.map((l) => `${l.transactionHash}:${l.index}`)).size).toBe(4);
  });

  test('snapshot/revert takes a mined transfer out of the canonical chain (a reorg)', async () => {
    const session = Wallet.createRandom().address;
    const snap = await node.snapshot();
    const { receipt } = await usdc.transfer(1, session, 7_000_000n);
    const reorgedHeight = receipt!.blockNumber;
    expect((await getTransfers(node.provider, usdc.address, reorgedHeight, reorgedHeight)).map((t) => t.to)).toEqual([session]);

    expect(await node.revert(snap)).toBe(true);
    expect(await node.blockNumber()).toBe(reorgedHeight - 1);
    expect(await usdc.balanceOf(session)).toBe(0n);
    expect(await node.receipt(receipt!.hash)).toBeNull();

    // the chain grows again at the same height with a different block
    await node.sendEth(2, Wallet.createRandom().address, 1n);
    const replacement = await node.provider.getBlock(reorgedHeight);
    expect(replacement!.hash).not.toBe(receipt!.blockHash);
    const head = await node.blockNumber();
    expect((await getTransfers(node.provider, usdc.address, usdc.deployBlock, head)).some((t) => t.to === session)).toBe(false);
  });

  test('with automine off, transactions wait in the mempool until a block is mined', async () => {
    const to = Wallet.createRandom().address;
    const before = await node.blockNumber();
    await node.setAutomine(false);
    try {
      const pending = await node.sendEth(3, to, 123_456_789_000n);
      expect(pending.receipt).toBeNull();
      expect(await node.blockNumber()).toBe(before);
      expect(await node.provider.getBalance(to)).toBe(0n);
      await node.mine();
      const r = await node.receipt(pending.hash);
      expect(r!.blockNumber).toBe(before + 1);
      expect(await node.provider.getBalance(to)).toBe(123_456_789_000n);
      await node.mine(5);
      expect(await node.blockNumber()).toBe(before + 6);
    } finally {
      await node.setAutomine(true);
    }
  });

  test('stop() ends the node', async () => {
    const other = await startHardhatNode();
    const url = other.url;
    expect(Number(await other.rpc<string>('eth_chainId'))).toBe(31337);
    await other.stop();
    await expect(fetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
  });
});

describe('Solana JSON-RPC harness (LiteSVM) + @solana/web3.js + lib/chains/solana-parse', () => {
  let sol: SolanaRpcHarness;
  let conn: Connection;
  let usdc: MintInfo;

  const parsed = async (signature: string): Promise<ParsedTransactionLike> => {
    const tx = await conn.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
    expect(tx).not.toBeNull();
    return tx as unknown as ParsedTransactionLike;
  };

  beforeAll(async () => {
    sol = await startSolanaRpc();
    conn = new Connection(sol.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
    usdc = await sol.createMint();
  });

  afterAll(async () => {
    await sol?.stop();
  });

  test('SOL to a session address: found by signature paging, parsed into an exact deposit', async () => {
    const payer = await sol.newWallet(2n * LAMPORTS_PER_SOL);
    const session = Keypair.generate().publicKey;
    const signature = await sol.transferSol(payer, session.toBase58(), 123_456_789n);

    const sigs = await conn.getSignaturesForAddress(session);
    expect(sigs.map((s) => s.signature)).toEqual([signature]);
    expect(sigs[0]!.err).toBeNull();
    expect(sigs[0]!.confirmationStatus).toBe('finalized');
    expect(sigs[0]!.slot).toBe(sol.slot());

    const deposits = extractSolanaDeposits(await parsed(signature), { owners: new Set([session.toBase58()]) });
    expect(deposits).toEqual([
      expect.objectContaining({ signature, owner: session.toBase58(), mint: null, amount: '123456789', slot: sigs[0]!.slot }),
    ]);
    expect(await conn.getBalance(session)).toBe(123_456_789);
    expect(sol.balance(payer.address)).toBe(2n * LAMPORTS_PER_SOL - 123_456_789n - 5_000n);
  });

  test('SPL USDC to a session address lands in its associated token account, partial then exact', async () => {
    const payer = await sol.newWallet(LAMPORTS_PER_SOL);
    await sol.mintTo(usdc.mint, payer.address, 10_000_000n);
    const session = Keypair.generate().publicKey.toBase58();
    const ata = await sol.associatedTokenAddress(session, usdc.mint);

    const first = await sol.transferToken(payer, session, usdc.mint, 1_500_000n);
    const second = await sol.transferToken(payer, session, usdc.mint, 1_000_000n, { checked: false });

    const sigs = await conn.getSignaturesForAddress(new PublicKey(ata));
    expect(sigs.map((s) => s.signature)).toEqual([second, first]); // newest first

    const owners = new Set([session]);
    const mints = new Set([usdc.mint]);
    // getParsedTransactions sends one JSON-RPC batch request
    const txs = await conn.getParsedTransactions(
      sigs.map((s) => s.signature),
      { maxSupportedTransactionVersion: 0, commitment: 'confirmed' },
    );
    const deposits = txs.flatMap((tx) => extractSolanaDeposits(tx as unknown as ParsedTransactionLike, { owners, mints }));
    expect(deposits.map((d) => [d.signature, d.mint, d.account, d.amount])).toEqual([
      [second, usdc.mint, ata, '1000000'],
      [first, usdc.mint, ata, '1500000'],
    ]);

    const balance = await conn.getTokenAccountBalance(new PublicKey(ata));
    expect(balance.value.amount).toBe('2500000');
    expect(balance.value.decimals).toBe(6);
    expect(await sol.tokenBalance(payer.address, usdc.mint)).toBe(7_500_000n);

    // the parsed instructions are what a node returns: createIdempotent + transferChecked / transfer
    const tx = await conn.getParsedTransaction(first, { maxSupportedTransactionVersion: 0 });
    const ixs = tx!.transaction.message.instructions.map((ix) =>
      'parsed' in ix ? `${ix.program}:${ix.parsed.type}` : ix.programId.toBase58(),
    );
    expect(ixs).toEqual(['spl-associated-token-account:createIdempotent', 'spl-token:transferChecked']);
    const tx2 = await conn.getParsedTransaction(second, { maxSupportedTransactionVersion: 0 });
    expect(tx2!.transaction.message.instructions.map((ix) => ('parsed' in ix ? ix.parsed.type : null))).toEqual([
      'createIdempotent',
      'transfer',
    ]);
  });

  test('a token of another mint to the same session is not USDC', async () => {
    const fake = await sol.createMint({ decimals: 6 });
    const payer = await sol.newWallet(LAMPORTS_PER_SOL);
    await sol.mintTo(fake.mint, payer.address, 5_000_000n);
    const session = Keypair.generate().publicKey.toBase58();
    const signature = await sol.transferToken(payer, session, fake.mint, 5_000_000n);
    const tx = await parsed(signature);
    expect(extractSolanaDeposits(tx, { owners: new Set([session]), mints: new Set([usdc.mint]) })).toEqual([]);
    expect(extractSolanaDeposits(tx, { owners: new Set([session]) }).map((d) => [d.mint, d.amount])).toEqual([[fake.mint, '5000000']]);
  });

  test('getSignaturesForAddress pages with limit/before/until, newest first', async () => {
    const payer = await sol.newWallet(LAMPORTS_PER_SOL);
    const session = Keypair.generate().publicKey;
    const sent: string[] = [];
    // the first payment to a new address must reach the rent-exempt minimum (890,880 lamports), as on a real cluster
    for (let i = 1; i <= 5; i++) sent.push(await sol.transferSol(payer, session.toBase58(), 1_000_000n + BigInt(i)));
    const newestFirst = [...sent].reverse();

    const paged: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await conn.getSignaturesForAddress(session, { limit: 2, before });
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(2);
      paged.push(...page.map((s) => s.signature));
      before = page[page.length - 1]!.signature;
    }
    expect(paged).toEqual(newestFirst);

    // a listener's cursor: everything newer than the last signature it processed
    const newer = await conn.getSignaturesForAddress(session, { until: sent[1] });
    expect(newer.map((s) => s.signature)).toEqual(newestFirst.slice(0, 3));
    const slots = (await conn.getSignaturesForAddress(session)).map((s) => s.slot);
    expect(slots).toEqual([...slots].sort((a, b) => b - a));
  });

  test('a failed transaction is rejected by preflight, or lands with an error and pays nothing', async () => {
    const poor = await sol.newWallet(1_000_000n);
    const session = Keypair.generate().publicKey.toBase58();
    await expect(sol.transferSol(poor, session, 5n * LAMPORTS_PER_SOL)).rejects.toThrow(/simulation failed/);

    const signature = await sol.transferSol(poor, session, 5n * LAMPORTS_PER_SOL, { skipPreflight: true });
    const [status] = (await conn.getSignatureStatuses([signature])).value;
    expect(status!.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    const tx = await parsed(signature);
    expect(extractSolanaDeposits(tx, { owners: new Set([session]) })).toEqual([]);
    expect(sol.balance(poor.address)).toBe(1_000_000n - 5_000n); // the fee was charged
  });

  test('a transaction built and signed by @solana/web3.js goes through sendTransaction', async () => {
    const kp = Keypair.generate();
    const airdropSig = await conn.requestAirdrop(kp.publicKey, LAMPORTS_PER_SOL.toString() as unknown as number);
    expect((await conn.getSignatureStatuses([airdropSig])).value[0]!.confirmationStatus).toBe('finalized');
    const session = Keypair.generate().publicKey;
    const { blockhash } = await conn.getLatestBlockhash();
    const tx = new Transaction({ feePayer: kp.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: kp.publicKey, toPubkey: session, lamports: 1_042_000 }),
    );
    tx.sign(kp);
    const signature = await conn.sendRawTransaction(tx.serialize());
    // legacy transactions are returned without maxSupportedTransactionVersion
    const got = await conn.getParsedTransaction(signature);
    expect(got!.transaction.message.instructions[0]).toEqual(
      expect.objectContaining({
        program: 'system',
        parsed: { type: 'transfer', info: { source: kp.publicKey.toBase58(), destination: session.toBase58(), lamports: 1_042_000 } },
      }),
    );
    expect(extractSolanaDeposits(got as unknown as ParsedTransactionLike, { owners: new Set([session.toBase58()]) })[0]!.amount).toBe(
      '1042000',
    );
    // the same bytes again are a duplicate, not a second payment
    await expect(conn.sendRawTransaction(tx.serialize())).rejects.toThrow(/already been processed/);
    expect((await conn.getSignaturesForAddress(session)).length).toBe(1);
  });

  test('commitment: with a finalization lag, new transactions are confirmed before they are finalized', async () => {
    const lagged = await startSolanaRpc({ finalizedLag: 32 });
    try {
      const c = new Connection(lagged.url, { disableRetryOnRateLimit: true });
      const payer = await lagged.newWallet(LAMPORTS_PER_SOL);
      const session = Keypair.generate().publicKey;
      const signature = await lagged.transferSol(payer, session.toBase58(), 1_000_000n);
      expect(await c.getSignaturesForAddress(session, {}, 'finalized')).toEqual([]);
      expect((await c.getSignaturesForAddress(session, {}, 'confirmed')).map((s) => s.confirmationStatus)).toEqual(['confirmed']);
      expect(await c.getSlot('finalized')).toBe(lagged.slot() - 32);
      lagged.advanceSlots(32);
      expect((await c.getSignaturesForAddress(session, {}, 'finalized')).map((s) => s.signature)).toEqual([signature]);
    } finally {
      await lagged.stop();
    }
  });
});
