/**
 * The Solana listener against the LiteSVM JSON-RPC harness (real Solana transactions: system program,
 * SPL Token, associated token accounts): SOL and SPL USDC payments to session addresses, partial and
 * exact, counted only at the configured commitment; another mint and SOL sent to a USDC session are
 * orphans that never move a session.
 */
import { startSolanaRpc, type MintInfo, type SolanaRpcHarness } from '../harness/solana-rpc.ts';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { openStore } from '../../lib/store/index.ts';
import { SessionAddressBook, sessionIdAt } from '../../lib/chains/address-book.ts';
import { DepositInbox } from '../../lib/chains/deposit-inbox.ts';
import { SolanaRailListener } from '../../lib/chains/solana/listener.ts';
import type { SessionMsg } from '../../lib/sessions/payment-session.ts';
import { merchant } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import {
  RAILS,
  acknowledgedDepositsOf,
  createSession,
  depositsOf,
  getSession,
  sessionWhen,
  until,
  webhooksOf,
} from './chain-listener-helpers.ts';

jest.setTimeout(180_000);

type KeyPair = Awaited<ReturnType<SolanaRpcHarness['newWallet']>>;

describe('Solana listener on the LiteSVM RPC harness', () => {
  let sol: SolanaRpcHarness;
  let usdc: MintInfo;
  let otherMint: MintInfo;
  let payer: KeyPair;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;

  const passes = async () => (await t.call<Record<string, any>>('solana-listener.status')).testnet.passes as number;
  /** waits until the listener has completed `n` more passes (so it had every chance to see something) */
  const morePasses = async (n: number) => {
    const start = await passes();
    await until(`${n} listener passes`, async () => (await passes()) >= start + n);
  };

  beforeAll(async () => {
    // a transaction is confirmed two slots after it lands: the listener must wait for that
    sol = await startSolanaRpc({ confirmedLag: 2, finalizedLag: 4 });
    usdc = await sol.createMint({ decimals: 6 });
    otherMint = await sol.createMint({ decimals: 6 });
    payer = await sol.newWallet(5_000_000_000n);
    await sol.mintTo(usdc.mint, payer.address, 1_000_000_000n);
    await sol.mintTo(otherMint.mint, payer.address, 1_000_000_000n);
    sol.advanceSlots(4);
    rx = await startReceiver();
    t = await startTestNode({
      SOLANA_TESTNET_RPC_URL: sol.url,
      SOLANA_TESTNET_USDC_MINT: usdc.mint,
      SOLANA_TESTNET_COMMITMENT: 'confirmed',
      CHAIN_POLL_INTERVAL_MS: '100',
      WEBHOOK_SCAN_INTERVAL_MS: '100',
    });
    m = await merchant(t, { webhook_url: rx.url });
    await until(
      'the listener to hold its lease',
      async () => (await t.call<Record<string, any>>('solana-listener.status')).testnet.holding,
    );
  });

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await sol?.stop();
  });

  it("USDC in two parts to the session address's token account: partial_paid, then completed, only once confirmed", async () => {
    const s = await createSession(t, m, RAILS.solUsdc, 5);
    const first = await sol.transferToken(payer, s.address, usdc.mint, 2_000_000n);
    // landed but not confirmed yet: the session does not move
    await morePasses(3);
    expect((await getSession(t, m, s.session_id)).status).toBe('pending');
    sol.advanceSlots(2);
    const partial = await sessionWhen(t, m, s.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    expect(partial.received_amount).toBe(2);
    expect(partial.deposits).toEqual([
      expect.objectContaining({ tx_hash: first, amount_subunits: '2000000', token: 'USDC', counted: true }),
    ]);
    expect(partial.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(partial.deposits.map((d: any) => d.tx_hash)).toContain(first);

    const second = await sol.transferToken(payer, s.address, usdc.mint, 3_000_000n, { checked: false });
    sol.advanceSlots(2);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(5);
    expect(done.deposits.map((d: any) => [d.tx_hash, d.amount])).toEqual([
      [first, 2],
      [second, 3],
    ]);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(second);
    const hooks = await until('both webhooks', () => webhooksOf(rx, s.session_id).length >= 2 && webhooksOf(rx, s.session_id));
    expect(hooks.map((r) => r.headers['x-service-event'])).toEqual(['payment_session.partial_paid', 'payment_session.completed']);
    for (const h of hooks) expect(verifyWebhook(h.raw, String(h.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    expect(JSON.parse(hooks[1]!.raw)).toEqual(
      expect.objectContaining({ chain: 'solana', network: 'testnet', currency: 'USDC', amount: 5 }),
    );

    // stored first: keyed by signature and the credited account's index; the account is the ATA
    const ata = await sol.associatedTokenAddress(s.address, usdc.mint);
    const stored = await acknowledgedDepositsOf(t, s.session_id);
    expect(stored).toHaveLength(2);
    for (const d of stored) {
      expect(d).toEqual(
        expect.objectContaining({
          status: 'credited',
          token: 'USDC',
          token_contract: usdc.mint,
          to_address: s.address,
          account: ata,
          block_hash: null,
        }),
      );
      expect(d.id).toBe(`solana:testnet:${d.tx_hash}:${d.index}`);
    }
  });

  it('SOL exact: one transfer completes a SOL session', async () => {
    const s = await createSession(t, m, RAILS.sol, 0.01);
    const sig = await sol.transferSol(payer, s.address, 10_000_000n);
    sol.advanceSlots(2);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(0.01);
    expect(done.deposits).toEqual([expect.objectContaining({ tx_hash: sig, token: 'SOL', amount_subunits: '10000000', counted: true })]);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(sig);
  });

  it('SOL partial, then the rest', async () => {
    const s = await createSession(t, m, RAILS.sol, 0.005);
    await sol.transferSol(payer, s.address, 2_000_000n);
    sol.advanceSlots(2);
    const partial = await sessionWhen(t, m, s.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    expect(partial.received_amount).toBe(0.002);
    await sol.transferSol(payer, s.address, 3_000_000n);
    sol.advanceSlots(2);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(0.005);
    expect(done.deposits).toHaveLength(2);
  });

  it('another mint, or SOL sent to a USDC session, never moves it and is an orphan', async () => {
    const s = await createSession(t, m, RAILS.solUsdc, 1);
    const wrongMint = await sol.transferToken(payer, s.address, otherMint.mint, 1_000_000n);
    const wrongAsset = await sol.transferSol(payer, s.address, 1_000_000_000n);
    sol.advanceSlots(2);
    const orphans = await until('both orphans', async () => {
      const list = (await t.call<{ deposits: any[] }>('operators.listDeposits', { orphans: true, session_id: s.session_id })).deposits;
      return list.length === 2 && list;
    });
    expect(orphans.map((d) => [d.tx_hash, d.orphan_reason, d.token, d.token_contract]).sort()).toEqual(
      [
        [wrongMint, 'wrong_token', null, otherMint.mint],
        [wrongAsset, 'wrong_token', 'SOL', null],
      ].sort(),
    );
    const after = await getSession(t, m, s.session_id);
    expect(after).toEqual(expect.objectContaining({ status: 'pending', received_amount: 0, deposits: [] }));
    expect(webhooksOf(rx, s.session_id)).toEqual([]);
  });

  it('keeps a cursor per watched address, so every transaction is read once', async () => {
    const s = await createSession(t, m, RAILS.solUsdc, 1);
    await sol.transferToken(payer, s.address, usdc.mint, 1_000_000n);
    sol.advanceSlots(2);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    const ata = await sol.associatedTokenAddress(s.address, usdc.mint);
    const cursors = await Promise.all([s.address, ata].map((a) => t.node.rt.store.get<any>('listener_cursors', `solana:testnet:${a}`)));
    for (const c of cursors)
      expect(c).toEqual(expect.objectContaining({ chain: 'solana', network: 'testnet', signature: expect.any(String) }));
    await morePasses(3);
    expect(await depositsOf(t, s.session_id)).toHaveLength(1);
    expect((await getSession(t, m, s.session_id)).deposits).toHaveLength(1);
  });

  it('without JSON-RPC batches (batchSize 1) the scanner finds the same deposits one address at a time', async () => {
    const dir = tempDir('sol-nobatch-');
    const store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
    try {
      const owner = (await sol.newWallet(0n)).address;
      const id = `${sessionIdAt(Date.now())}nobatch000000000`;
      await store.write([
        {
          op: 'insert',
          coll: 'payment_sessions',
          doc: {
            id,
            chain: 'solana',
            network: 'testnet',
            token: 'USDC',
            address: owner,
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          },
        },
      ]);
      const sent: SessionMsg[] = [];
      const inbox = new DepositInbox(store, {
        send: async (_id, msg) => {
          sent.push(msg);
          return { session: {} as any, events: [], changed: true, credit: 'credited' };
        },
        log: { warn: () => undefined },
      });
      const book = new SessionAddressBook(store, 'solana', { keepAfterExpiryMs: 0 });
      const scanner = new SolanaRailListener({
        network: 'testnet',
        rpcUrl: sol.url,
        usdcMint: usdc.mint,
        commitment: 'confirmed',
        store,
        book,
        inbox,
        batchSize: 1,
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      });
      const sig = await sol.transferToken(payer, owner, usdc.mint, 1_250_000n);
      sol.advanceSlots(2);
      const stats = await scanner.pass();
      expect(stats).toEqual(expect.objectContaining({ watched: 1, polled: 1, failed: 0, deposits: 1 }));
      expect(sent).toEqual([
        {
          type: 'credit',
          deposit: expect.objectContaining({ key: expect.stringContaining(sig), amount_subunits: '1250000', token: 'USDC' }),
        },
      ]);
      expect((await scanner.pass()).deposits).toBe(0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
