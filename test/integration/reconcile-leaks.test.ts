/**
 * Reconciliation sees the money leaks of issue 18, on a real Hardhat node and the LiteSVM harness, with
 * merchants acting through HTTP and the money-out engines running in the test (so a driver double can
 * sit between them and the chain): a clean run stays clean, and each leak is reported by
 * `reconcile --deep` and by the scanner's `reconciliation_drift` alert, naming the row, the address and
 * the difference. Where the code no longer leaks, the test puts the leak back first (a driver double, or
 * a ledger write that forgets a booking: fault injection, no production flag); where it still does, that
 * put-back changes nothing and the natural leak is seen:
 * - two equal Solana payouts collapsing into one signature;
 * - Solana rent paid by the gas wallet for new token accounts, booked nowhere;
 * - Ethereum gas top-ups whose leftover becomes the merchant's balance (gas farming);
 * - x402 settlement fees paid by the gas wallet, booked nowhere;
 * - a custody move that failed for good, whose difference used to hide as "in flight".
 * And a drift's life: money taken out of wallets with their keys is found (and listed with its id by
 * `reconcile --deep`); once the cause is fixed (the balance put back) the next run resolves the drift, its
 * alert resolves at the webhook and in Alertmanager and its metric series goes; a drift acknowledged with
 * `reconcile:ack` stays listed under `--all`, is audited with who and why, and raises nothing on the next
 * run while found with the same difference.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { SERVICES_WITHOUT_MONEY_OUT, startEngines, type Engines } from '../helpers/money-out.ts';
import { merchant } from './sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from './chain-listener-helpers.ts';
import { createWallet } from './agents-helpers.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { KeyDeriver } from '../../lib/chains/keys.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { signEip3009Proof, buildSolanaProof } from '../../lib/x402/payer.ts';
import { closeClients, solConnection } from '../../lib/chains/clients.ts';
import { CHAIN_TXS, type ChainTxDoc, type TxAttempt, type TxDriver, type TxIntent } from '../../lib/chains/broadcast/types.ts';
import { TRANSFERS, accountId, transferOps, walletAccount, type LedgerAccount, type LedgerTransfer } from '../../lib/ledger/index.ts';
import type { ReconcileReport } from '../../lib/treasury/reconcile/run.ts';
import type { Drift } from '../../lib/treasury/reconcile/drift.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { startAlertmanager, type Alertmanager } from '../helpers/alertmanager.ts';
import { eventually } from '../helpers/wait.ts';
import { computeSignature, parseSignatureHeader } from '../../lib/webhooks/signature.ts';

jest.setTimeout(600_000);
const run = promisify(execFile);
const RENT = 2_039_280n; // lamports a new SPL token account holds
const ALERT_SECRET = 'reconcile-alert-secret-0123456789';

/**
 * A Solana driver double that signs equal transfers the way the code signed them before issue 18 (the
 * same bytes within one blockhash), whatever the intent carries beyond the transfer: while `on`, a
 * transfer equal in sender, receiver, asset and amount to one signed in the last minute gets that one's
 * signed attempt.
 */
class CollapsingDriver {
  on = false;
  private recent = new Map<string, { attempt: Promise<TxAttempt>; at: number }>();
  wrap(d: TxDriver): TxDriver {
    const sign = d.sign.bind(d);
    d.sign = async (intent: TxIntent, nonce: number | null, rowId: string) => {
      if (!this.on || intent.chain !== 'solana' || intent.kind === 'cosign') return sign(intent, nonce, rowId);
      const k = JSON.stringify([intent.kind, intent.from, intent.to, intent.kind === 'native' ? intent.lamports : intent.amount]);
      const hit = this.recent.get(k);
      if (hit && Date.now() - hit.at < 60_000) return hit.attempt;
      // kept before it resolves: a second equal transfer signed meanwhile gets the same bytes
      const attempt = sign(intent, nonce, rowId);
      this.recent.set(k, { attempt, at: Date.now() });
      return attempt;
    };
    return d;
  }
}

/**
 * A driver double whose custody moves never land (fault injection): while `on`, what is signed is never
 * sent, and a custody row carrying it is reported failed, so the move fails for good after its attempts.
 */
class FailingCustody {
  on = false;
  private raws = new Set<string>();
  private hashes = new Set<string>();
  wrap(d: TxDriver): TxDriver {
    const sign = d.sign.bind(d);
    const send = d.send.bind(d);
    const check = d.check.bind(d);
    d.sign = async (intent, nonce, rowId) => {
      const a = await sign(intent, nonce, rowId);
      if (this.on) {
        this.raws.add(a.raw);
        this.hashes.add(a.hash);
      }
      return a;
    };
    d.send = async (raw) => (this.raws.has(raw) ? undefined : send(raw));
    d.check = async (doc) =>
      doc.purpose === 'custody' && doc.attempts.some((a) => this.hashes.has(a.hash))
        ? { state: 'failed', reason: 'injected: the move never landed', hash: null, block: null, fee: null }
        : check(doc);
    return d;
  }
}

describe('reconciliation sees every leak (Hardhat + LiteSVM)', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let engines: Engines;
  let env: Record<string, string>;
  let gasEth: string;
  let gasSol: string;
  let alertRx: Receiver;
  let am: Alertmanager;
  const collapse = new CollapsingDriver();
  const failCustody = new FailingCustody();

  beforeAll(async () => {
    [eth, sol, alertRx, am] = await Promise.all([startHardhatNode(), startSolanaRpc(), startReceiver(() => 200), startAlertmanager()]);
    usdc = await eth.deployTestUsdc();
    mint = await sol.createMint();
    await usdc.mint(eth.accounts[1]!.address, 1_000_000_000n);
    env = {
      ETHEREUM_TESTNET_RPC_URL: eth.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      SOLANA_TESTNET_RPC_URL: sol.url,
      SOLANA_TESTNET_USDC_MINT: mint.mint,
      CHAIN_POLL_INTERVAL_MS: '100',
      SESSION_SCAN_INTERVAL_MS: '100',
      AGENTS_SCAN_INTERVAL_MS: '200',
    };
    t = await startTestNode({
      ...env,
      SERVICES: SERVICES_WITHOUT_MONEY_OUT,
      ALERT_WEBHOOK_URL: alertRx.url,
      ALERT_WEBHOOK_SECRET: ALERT_SECRET,
      ALERTMANAGER_URL: am.url,
      ALERT_SCAN_INTERVAL_MS: '200',
    });
    engines = startEngines(t, {
      custodyMaxAttempts: 2,
      wrapDriver: (d, chain) => (chain === 'solana' ? failCustody.wrap(collapse.wrap(d)) : failCustody.wrap(d)),
    });
    const keys = new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase);
    gasEth = keys.address(gasWalletRef('ethereum', 'testnet'));
    gasSol = keys.address(gasWalletRef('solana', 'testnet'));
    await eth.setBalance(gasEth, 10n ** 19n);
    await sol.airdrop(gasSol, 20_000_000_000n);
    // the first run meets the gas wallets: what they hold now is their opening balance
    const first = await deep();
    expect(first.ok).toBe(true);
    expect(first.networks.flatMap((n) => n.calibrated).sort()).toEqual([gasEth, gasSol].sort());
  }, 240_000);

  afterAll(async () => {
    await engines?.stop();
    await t?.stop();
    await closeClients();
    await Promise.all([eth?.stop(), sol?.stop(), alertRx?.close(), am?.stop()]);
  });

  const deep = () => t.call<ReconcileReport>('treasury.reconcile', { deep: true });
  const op = (...args: string[]) =>
    run(process.execPath, ['scripts/operator.ts', ...args], {
      env: { ...process.env, ...env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error', RECONCILE_INTERVAL_MS: '0' },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout + e.stderr }),
    );
  const cli = () => op('reconcile', '--deep');
  const tick = async () => (await engines.scanner.runOnce())!;
  const alerts = async () =>
    (await t.call<{ alerts: Array<Record<string, any>> }>('ops.alerts', { type: 'reconciliation_drift', limit: 500 })).alerts;
  const find = (r: { drifts: Drift[] }, p: Partial<Drift>) =>
    r.drifts.filter((d) => Object.entries(p).every(([k, v]) => (d as unknown as Record<string, unknown>)[k] === v));

  const store = () => t.node.rt.store;
  const landedHash = async (rowId: string) => (await store().get<ChainTxDoc>(CHAIN_TXS, rowId))!.tx_hash;

  /**
   * Puts back a cost booked nowhere: the ledger forgets what it booked against `account` for a transaction
   * beyond `keep` (a compensating transfer with the same hash). Returns what it forgot (0: nothing was
   * booked beyond it, the leak is there by itself).
   */
  async function unbook(hash: string, account: string, asset: string, keep: bigint): Promise<bigint> {
    let booked = 0n;
    for (const x of await store().find<LedgerTransfer>(TRANSFERS, { tx_hash: hash })) {
      if (x.status !== 'posted' || x.asset !== asset) continue;
      if (x.debit_account === account) booked += BigInt(x.amount);
      if (x.credit_account === account) booked -= BigInt(x.amount);
    }
    const extra = booked - keep;
    if (extra <= 0n) return 0n;
    await store().write(
      await transferOps(store(), {
        id: `putback:${hash}:${account}`,
        kind: 'fee',
        asset,
        amount: extra,
        debit_account: accountId('sys:fees', asset),
        credit_account: account,
        tx_hash: hash,
      }),
    );
    return extra;
  }

  const get = async (m: RegisteredMerchant, path: string) => {
    const r = await t.request('GET', path, { key: m.apiKey });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bal = (w: any, token: string) => BigInt(w.balances.find((b: any) => b.token === token)?.available_subunits ?? '0');
  const defaultWallet = async (m: RegisteredMerchant, chain: string) =>
    (await get(m, '/v1/wallets?limit=100')).data.find((w: any) => w.chain === chain && w.type === 'merchant');
  const payout = async (m: RegisteredMerchant, body: Record<string, unknown>) => {
    const r = await t.request('POST', '/v1/payouts', { key: m.apiKey, body });
    if (r.status !== 201) throw new Error(`payout refused: ${r.status} ${r.text}`);
    return r.body;
  };
  const payoutDone = (m: RegisteredMerchant, id: string) =>
    until(
      `payout ${id} final`,
      async () => {
        await engines.round();
        const p = await get(m, `/v1/payouts/${id}`);
        return p.status === 'completed' || p.status === 'failed' ? p : null;
      },
      120_000,
    );

  /** a session of `rail` paid on chain by an outside payer, swept: its wallet has it available */
  async function paid(
    m: RegisteredMerchant,
    rail: (typeof RAILS)[keyof typeof RAILS],
    amount: number,
    pay: (address: string) => Promise<unknown>,
  ) {
    const s = await createSession(t, m, rail, amount);
    await pay(s.address);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed', 90_000);
    await until(
      'the deposit swept and available',
      async () => {
        await engines.round();
        const w = await defaultWallet(m, rail.chain);
        const txs = w ? (await get(m, `/v1/wallets/${w.id}/transactions?limit=100`)).data : [];
        return txs.some((x: any) => x.session_id === s.session_id && x.type === 'settlement' && x.status === 'posted') ? w : null;
      },
      120_000,
    );
    await engines.settle();
    return defaultWallet(m, rail.chain);
  }

  const solPayer = async () => {
    const p = await sol.newWallet(5_000_000_000n);
    await sol.mintTo(mint.mint, p.address, 100_000_000n);
    return p;
  };

  it('a clean run stays clean: deposits, sweeps, payouts and custody moves on both chains', async () => {
    const m = await merchant(t);
    const payer = await solPayer();
    const sw = await paid(m, RAILS.sol, 0.5, (a) => sol.transferSol(payer, a, 500_000_000n));
    await paid(m, RAILS.solUsdc, 5, (a) => sol.transferToken(payer, a, mint.mint, 5_000_000n));
    const ew = await paid(m, RAILS.eth, 0.05, (a) => eth.sendEth(2, a, 5n * 10n ** 16n));
    await paid(m, RAILS.ethUsdc, 10, (a) => usdc.transfer(1, a, 10_000_000n));
    const agentEth = await createWallet(t, m, 'agent');
    const agentSol = await createWallet(t, m, 'agent', 'solana');
    const done = [
      await payout(m, {
        wallet_id: sw.id,
        amount_subunits: '100000000',
        token: 'SOL',
        destination: Keypair.generate().publicKey.toBase58(),
      }),
      await payout(m, {
        wallet_id: sw.id,
        amount_subunits: '1000000',
        token: 'USDC',
        destination: Keypair.generate().publicKey.toBase58(),
      }),
      await payout(m, { wallet_id: ew.id, amount_subunits: '10000000000000000', token: 'ETH', destination: Wallet.createRandom().address }),
      await payout(m, { wallet_id: ew.id, amount_subunits: '2000000', token: 'USDC', destination: Wallet.createRandom().address }),
    ];
    // internal transfers: custody moves on both chains, the platform paying
    await payout(m, { wallet_id: ew.id, amount_subunits: '3000000', token: 'USDC', destination: agentEth.address });
    await payout(m, { wallet_id: sw.id, amount_subunits: '2000000', token: 'USDC', destination: agentSol.address });
    for (const p of done) expect((await payoutDone(m, p.id)).status).toBe('completed');
    await engines.settle();

    const ticked = await tick();
    expect(ticked.drifts).toEqual([]);
    expect(await alerts()).toEqual([]);
    expect(await t.node.rt.metrics.registry.metrics()).toMatch(
      /^reconciliation_drifts\{chain="solana",network="testnet",check="movement"\} 0$/m,
    );
    const r = await deep();
    expect(r.drifts).toEqual([]);
    expect(r.ok).toBe(true);
    for (const n of r.networks) {
      expect(n.error).toBeNull();
      expect(n.height).toBeGreaterThan(0);
      expect(n.addresses_checked).toBeGreaterThanOrEqual(3);
    }
    const out = await cli();
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^reconciliation \(deep\) run rcr_[0-9a-z]{26} at \S+: clean$/m);
    expect(out.stdout).toMatch(/^ethereum testnet at block \d+: /m);
    expect(out.stdout).toMatch(/^solana testnet at slot \d+: /m);
  });

  it('two equal Solana payouts under one signature: the shared transaction and the wallet difference', async () => {
    const m = await merchant(t);
    const payer = await solPayer();
    const w = await paid(m, RAILS.sol, 0.5, (a) => sol.transferSol(payer, a, 500_000_000n));
    const dest = Keypair.generate().publicKey.toBase58();
    collapse.on = true;
    try {
      const body = { wallet_id: w.id, amount_subunits: '50000000', token: 'SOL', destination: dest };
      const [a, b] = [await payout(m, body), await payout(m, body)];
      expect((await payoutDone(m, a.id)).status).toBe('completed');
      expect((await payoutDone(m, b.id)).status).toBe('completed');
    } finally {
      collapse.on = false;
    }
    await engines.settle();
    // the leak itself: the ledger paid out twice, the destination received once
    expect(sol.balance(dest)).toBe(50_000_000n);
    const txs = (await get(m, `/v1/wallets/${w.id}/transactions?limit=100`)).data;
    expect(
      txs.filter((x: any) => x.type === 'payout' && x.token === 'SOL' && x.status === 'posted').map((x: any) => x.amount_subunits),
    ).toEqual(['50000000', '50000000']);

    const ticked = await tick();
    const shared = find(ticked, { code: 'shared_transaction' });
    expect(shared).toHaveLength(1);
    expect(shared[0]).toMatchObject({ address: dest, asset: 'solana:testnet:SOL', difference: '-50000000' });
    expect(shared[0]!.row).toMatch(/^payout:po_/);
    // the wallet still holds the second amount (and the fee charged for it, where payouts pay their own)
    const wallet = find(ticked, { code: 'balance', address: w.address });
    expect(wallet).toEqual([expect.objectContaining({ asset: 'solana:testnet:SOL', wallet_id: w.id })]);
    expect(BigInt(wallet[0]!.difference!) - 50_000_000n).toBeGreaterThanOrEqual(0n);
    expect(BigInt(wallet[0]!.difference!) - 50_000_000n).toBeLessThanOrEqual(10_000n);
    const raised = await alerts();
    expect(raised).toContainEqual(
      expect.objectContaining({
        alert_type: 'reconciliation_drift',
        severity: 'P1',
        row: shared[0]!.row,
        address: dest,
        difference: '-50000000',
      }),
    );
    expect(raised).toContainEqual(
      expect.objectContaining({ address: w.address, asset: 'solana:testnet:SOL', difference: wallet[0]!.difference }),
    );
    // the alert pipeline delivers it: signed to the alert webhook, and into a real Alertmanager
    const sent = await eventually(
      'the drift alert at the webhook',
      () => alertRx.received.find((r) => JSON.parse(r.raw).row === shared[0]!.row),
      60_000,
      200,
    );
    const sig = parseSignatureHeader(String(sent.headers['x-service-signature']));
    expect(sig!.signatures).toContain(computeSignature(sig!.timestamp, sent.raw, ALERT_SECRET));
    expect(String(sent.headers['x-service-event'])).toBe('alert.reconciliation_drift');
    expect(JSON.parse(sent.raw)).toMatchObject({
      alert_type: 'reconciliation_drift',
      severity: 'P1',
      address: dest,
      asset: 'solana:testnet:SOL',
      difference: '-50000000',
      last_error_code: 'shared_transaction',
    });
    const held = await eventually(
      'the drift alert in Alertmanager',
      async () => (await am.alerts()).find((g) => g.annotations.row === shared[0]!.row),
      60_000,
      500,
    );
    expect(held.labels).toMatchObject({ alertname: 'reconciliation_drift', severity: 'P1' });
    expect(held.annotations).toMatchObject({ address: dest, difference: '-50000000' });
    // and a metric names the row, the address and the difference
    const metrics = await t.node.rt.metrics.registry.metrics();
    expect(metrics).toContain(
      `reconciliation_drift_subunits{chain="solana",network="testnet",check="movement",code="shared_transaction",row="${shared[0]!.row}",address="${dest}",asset="solana:testnet:SOL"} -50000000`,
    );

    const out = await cli();
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(
      `DRIFT movement shared_transaction row=${shared[0]!.row} address=${dest} asset=solana:testnet:SOL difference=-50000000`,
    );
    expect(out.stdout).toContain(`DRIFT address balance address=${w.address} asset=solana:testnet:SOL difference=${wallet[0]!.difference}`);
  });

  it('Solana rent for new token accounts, booked nowhere', async () => {
    const m = await merchant(t);
    const payer = await solPayer();
    // a merchant that can pay its own payout fees (SOL) and holds USDC in a wallet with no token account yet
    await paid(m, RAILS.sol, 0.5, (a) => sol.transferSol(payer, a, 500_000_000n));
    const w = await paid(m, RAILS.solUsdc, 3, (a) => sol.transferToken(payer, a, mint.mint, 3_000_000n));
    const sweep = (await store().find<ChainTxDoc>(CHAIN_TXS, { purpose: 'sweep' })).find(
      (r) => r.to_address === w.address && 'mint' in r.intent,
    )!;
    const dest = Keypair.generate().publicKey.toBase58();
    const p = await payout(m, { wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest });
    expect((await payoutDone(m, p.id)).status).toBe('completed');
    await engines.settle();
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(1_000_000n);
    // the leak put back where rent is booked: the ledger forgets it (the network fee stays booked)
    const gasAccount = accountId('sys:gas', 'solana:testnet:SOL');
    const sweepHash = await landedHash(sweep.id);
    await unbook(sweepHash, gasAccount, 'solana:testnet:SOL', sol.getLoggedTransaction(sweepHash)!.meta.fee);
    const payoutHash = await landedHash(`payout:${p.id}`);
    const fee = sol.getLoggedTransaction(payoutHash)!.meta.fee;
    await unbook(payoutHash, gasAccount, 'solana:testnet:SOL', fee);
    await unbook(payoutHash, walletAccount(w.id, 'solana:testnet:SOL'), 'solana:testnet:SOL', fee);

    const ticked = await tick();
    // the sweep created the wallet's token account from the gas wallet
    expect(find(ticked, { code: 'unbooked_platform_cost', row: sweep.id })).toEqual([
      expect.objectContaining({ address: gasSol, asset: 'solana:testnet:SOL', difference: (-RENT).toString() }),
    ]);
    // the payout created the destination's: paid by the gas wallet, or by the wallet itself where payouts pay their own
    const payoutRent = ticked.drifts.filter(
      (d) => d.difference === (-RENT).toString() && (d.row === `payout:${p.id}` || (d.code === 'balance' && d.address === w.address)),
    );
    expect(payoutRent).toHaveLength(1);
    const raised = await alerts();
    expect(raised).toContainEqual(
      expect.objectContaining({ row: sweep.id, address: gasSol, asset: 'solana:testnet:SOL', difference: (-RENT).toString() }),
    );
    expect(raised).toContainEqual(expect.objectContaining({ address: payoutRent[0]!.address, difference: (-RENT).toString() }));
    const out = await cli();
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(
      `DRIFT platform unbooked_platform_cost row=${sweep.id} address=${gasSol} asset=solana:testnet:SOL difference=-${RENT}`,
    );
  });

  it('Ethereum gas top-ups: the leftover becomes merchant balance (gas farming)', async () => {
    const m = await merchant(t);
    const w = await paid(m, RAILS.ethUsdc, 10, (a) => usdc.transfer(1, a, 10_000_000n));
    const agent = await createWallet(t, m, 'agent');
    const internal = await payout(m, { wallet_id: w.id, amount_subunits: '4000000', token: 'USDC', destination: agent.address });
    expect(internal.execution).toBe('ledger');
    await engines.settle();
    const move = (await store().get<{ id: string; topup_tx: string | null; status: string }>('custody_moves', `custody:${internal.id}`))!;
    expect(move.status).toBe('completed');
    const topupRow = (await store().find<ChainTxDoc>(CHAIN_TXS, { ref: move.id })).find((r) => r.purpose === 'custody_topup')!;
    // the leak put back where top-ups are parked as the platform's: the leftover moved into the wallet's balance
    for (const acc of await store().find<LedgerAccount>('ledger_accounts', { owner: { $gte: 'sys:', $lt: 'sys;' } })) {
      if (!acc.owner.toLowerCase().endsWith(`@${w.address.toLowerCase()}`) || acc.asset !== 'ethereum:testnet:ETH') continue;
      const parked = BigInt(acc.credits_posted) - BigInt(acc.debits_posted);
      if (parked > 0n)
        await store().write(
          await transferOps(store(), {
            id: `putback:${topupRow.id}`,
            kind: 'fee',
            asset: acc.asset,
            amount: parked,
            debit_account: acc.id,
            credit_account: walletAccount(w.id, acc.asset),
            tx_hash: topupRow.tx_hash,
          }),
        );
    }
    // the leak itself: a merchant that never deposited ETH can withdraw ETH
    const farmed = bal(await get(m, `/v1/wallets/${w.id}`), 'ETH');
    expect(farmed).toBeGreaterThan(0n);
    expect(await eth.provider.getBalance(w.address)).toBe(farmed);

    const ticked = await tick();
    const gifts = find(ticked, { code: 'platform_money_to_merchant', address: w.address });
    expect(gifts).toEqual([
      expect.objectContaining({ row: topupRow.id, asset: 'ethereum:testnet:ETH', wallet_id: w.id, difference: (-farmed).toString() }),
    ]);
    expect(await alerts()).toContainEqual(
      expect.objectContaining({ row: topupRow.id, address: w.address, difference: (-farmed).toString() }),
    );
    const out = await cli();
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(
      `DRIFT platform platform_money_to_merchant row=${topupRow.id} address=${w.address} asset=ethereum:testnet:ETH difference=-${farmed}`,
    );
  });

  it('x402 settlements: the gas wallet pays the fee, the ledger books none (EIP-3009 and Solana)', async () => {
    const m = await merchant(t);
    const challenge = async (chain: 'ethereum' | 'solana') => {
      const r = await t.request('POST', '/v1/x402/challenges', {
        key: m.apiKey,
        body: { resource: `/data/${chain}`, amount_subunits: '1500000', paymentMethod: { chain, network: 'testnet', token: 'USDC' } },
      });
      if (r.status !== 201) throw new Error(`challenge: ${r.status} ${r.text}`);
      return r.body;
    };
    const redeem = async (proof: string, resource: string) => {
      const r = await t.request('POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource } });
      if (r.status !== 200) throw new Error(`redeem: ${r.status} ${r.text}`);
      return r.body;
    };
    // Ethereum: an outside key's authorization, submitted by the gas wallet
    const ce = await challenge('ethereum');
    const outside = Wallet.createRandom();
    await usdc.mint(outside.address, 5_000_000n);
    const block = await eth.provider.getBlock('latest');
    const proof = await signEip3009Proof(outside, ce.challenge, {
      chainId: eth.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
    });
    const settledE = await redeem(proof, '/data/ethereum');
    const receipt = await eth.receipt(settledE.tx_hash);
    const feeE = receipt!.gasUsed * receipt!.gasPrice;
    // Solana: the payer's transfer, co-signed by the gas wallet as fee payer
    const cs = await challenge('solana');
    const payTo = new PublicKey(cs.challenge.payTo).toBase58();
    await sol.createAssociatedTokenAccount(payTo, mint.mint);
    const payer = Keypair.generate();
    await sol.airdrop(payer.publicKey.toBase58(), 1_000_000_000n);
    await sol.mintTo(mint.mint, payer.publicKey.toBase58(), 5_000_000n);
    const { blockhash } = await solConnection(sol.url).getLatestBlockhash();
    const settledS = await redeem(
      buildSolanaProof(payer, cs.challenge, { feePayer: cs.fee_payer, recentBlockhash: blockhash }),
      '/data/solana',
    );
    const feeS = sol.getLoggedTransaction(settledS.tx_hash)!.meta.fee;
    // the leak put back where settlement fees are booked: the ledger forgets them
    await unbook(settledE.tx_hash, accountId('sys:gas', 'ethereum:testnet:ETH'), 'ethereum:testnet:ETH', 0n);
    await unbook(settledS.tx_hash, accountId('sys:gas', 'solana:testnet:SOL'), 'solana:testnet:SOL', 0n);

    const ticked = await tick();
    expect(find(ticked, { code: 'unbooked_platform_cost', row: `x402:${ce.challenge_id}` })).toEqual([
      expect.objectContaining({ address: gasEth, asset: 'ethereum:testnet:ETH', difference: (-feeE).toString() }),
    ]);
    expect(find(ticked, { code: 'unbooked_platform_cost', row: `x402:${cs.challenge_id}` })).toEqual([
      expect.objectContaining({ address: gasSol, asset: 'solana:testnet:SOL', difference: (-feeS).toString() }),
    ]);
    expect(await alerts()).toContainEqual(
      expect.objectContaining({ row: `x402:${ce.challenge_id}`, address: gasEth, difference: (-feeE).toString() }),
    );
    const out = await cli();
    expect(out.stdout).toContain(
      `DRIFT platform unbooked_platform_cost row=x402:${cs.challenge_id} address=${gasSol} asset=solana:testnet:SOL difference=-${feeS}`,
    );
  });

  it('a custody move that failed for good: its difference shows at both wallets', async () => {
    const m = await merchant(t);
    const payer = await solPayer();
    const w = await paid(m, RAILS.sol, 0.5, (a) => sol.transferSol(payer, a, 500_000_000n));
    const agent = await createWallet(t, m, 'agent', 'solana');
    failCustody.on = true;
    let internal: any;
    try {
      internal = await payout(m, { wallet_id: w.id, amount_subunits: '200000000', token: 'SOL', destination: agent.address });
      await until(
        'the custody move failed for good',
        async () => {
          await engines.round();
          return (
            (await t.node.rt.store.get<{ id: string; status: string }>('custody_moves', `custody:${internal.id}`))?.status === 'failed'
          );
        },
        120_000,
      );
    } finally {
      failCustody.on = false;
    }
    // the ledger moved it; the chain did not
    expect(bal(await get(m, `/v1/wallets/${agent.id}`), 'SOL')).toBe(200_000_000n);
    expect(sol.balance(agent.address)).toBe(0n);

    const ticked = await tick();
    const at = (address: string) => find(ticked, { code: 'balance', address, asset: 'solana:testnet:SOL' });
    expect(at(w.address)).toEqual([expect.objectContaining({ difference: '200000000', wallet_id: w.id })]);
    expect(at(agent.address)).toEqual([expect.objectContaining({ difference: '-200000000', wallet_id: agent.id })]);
    expect(at(agent.address)[0]!.row).toMatch(new RegExp(`^custody:${internal.id}`));
    expect(at(agent.address)[0]!.message).toContain('failed for good');
    expect(await alerts()).toContainEqual(expect.objectContaining({ address: agent.address, difference: '-200000000' }));
    // the quick wallet comparison no longer hides it as in flight either
    const quick = await t.call<{ differences: Array<{ wallet_id: string; difference_subunits: string }> }>('treasury.reconcile');
    expect(quick.differences).toContainEqual(expect.objectContaining({ wallet_id: agent.id, difference_subunits: '-200000000' }));
    const out = await cli();
    expect(out.stdout).toContain(`address=${agent.address} asset=solana:testnet:SOL difference=-200000000`);
  });

  it('money out of a platform address in a transaction of no outbox row (a leaked key): found on both chains', async () => {
    const m = await merchant(t);
    const payer = await solPayer();
    const sw = await paid(m, RAILS.sol, 0.5, (a) => sol.transferSol(payer, a, 500_000_000n));
    const ew = await paid(m, RAILS.eth, 0.05, (a) => eth.sendEth(3, a, 5n * 10n ** 16n));
    const keys = new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase);
    const index = async (id: string) =>
      (await t.node.rt.store.get<{ id: string; derivation_index: number }>('wallets', id))!.derivation_index;
    // someone holding the wallets' keys sends money out, outside the service
    const thief = Wallet.createRandom().address;
    const ethBefore = await eth.provider.getBalance(ew.address);
    const ethKey = new Wallet(
      Buffer.from(keys.privateKey({ role: 'wallet', chain: 'ethereum', index: await index(ew.id) })).toString('hex'),
      eth.provider,
    );
    const sent = await ethKey.sendTransaction({ to: thief, value: 10n ** 16n });
    await sent.wait();
    const solKey = Keypair.fromSeed(keys.privateKey({ role: 'wallet', chain: 'solana', index: await index(sw.id) }));
    const conn = solConnection(sol.url);
    const tx = new Transaction({ feePayer: solKey.publicKey, ...(await conn.getLatestBlockhash()) }).add(
      SystemProgram.transfer({ fromPubkey: solKey.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 100_000_000 }),
    );
    tx.sign(solKey);
    // the harness executes a transaction before answering (no websocket confirmation needed)
    const sig = await conn.sendRawTransaction(tx.serialize());

    const ticked = await tick();
    expect(find(ticked, { code: 'unknown_outflow', address: ew.address })).toEqual([
      expect.objectContaining({ asset: 'ethereum:testnet:ETH', difference: (-(10n ** 16n)).toString(), wallet_id: ew.id }),
    ]);
    expect(find(ticked, { code: 'unknown_outflow', address: sw.address })).toEqual([
      expect.objectContaining({ asset: 'solana:testnet:SOL', difference: '-100005000', wallet_id: sw.id }),
    ]);
    expect(find(ticked, { code: 'unknown_outflow', address: sw.address })[0]!.message).toContain(sig);
    // and the balances no longer match the books
    expect(find(ticked, { code: 'balance', address: sw.address })).toEqual([expect.objectContaining({ difference: '-100005000' })]);
    expect(find(ticked, { code: 'balance', address: ew.address })).toHaveLength(1);
    expect(await alerts()).toContainEqual(expect.objectContaining({ address: ew.address, difference: (-(10n ** 16n)).toString() }));

    // --- the drifts' life ---
    const ethBalance = find(ticked, { code: 'balance', address: ew.address })[0]! as Drift & { id: string };
    const solBalance = find(ticked, { code: 'balance', address: sw.address })[0]! as Drift & { id: string };
    const alertOf = async (d: Drift) =>
      (await alerts()).filter((a) => a.last_error_code === d.code && a.address === d.address && a.asset === d.asset);
    const metricOf = (d: Drift) => `code="${d.code}",row="${d.row ?? ''}",address="${d.address}",asset="${d.asset}"}`;
    // open: listed by the command with the id to acknowledge, a metric series each
    let out = await cli();
    expect(out.code).toBe(1);
    expect(ethBalance.id).toMatch(/^drf_[0-9a-f]{26}$/);
    for (const d of [ethBalance, solBalance])
      expect(out.stdout).toContain(`address=${d.address} asset=${d.asset} difference=${d.difference} id=${d.id}: `);
    expect(await t.node.rt.metrics.registry.metrics()).toContain(metricOf(ethBalance));

    // the cause fixed: the Ethereum wallet holds again what the books say (put back without a transaction)
    await eth.setBalance(ew.address, ethBefore);
    const fixed = await tick();
    expect(fixed.resolved).toContainEqual(
      expect.objectContaining({ id: ethBalance.id, state: 'resolved', resolved_by_run: fixed.run_id, resolved_at: fixed.at }),
    );
    expect(find(fixed, { code: 'balance', address: ew.address })).toEqual([]);
    // its alert resolved through the pipeline: stored, signed at the webhook as a resolution, ended in Alertmanager
    const [ethAlert] = await alertOf(ethBalance);
    expect(ethAlert).toMatchObject({ status: 'resolved', resolution: 'resolved' });
    const resolvedAtHook = await eventually(
      'the resolution at the alert webhook',
      () =>
        alertRx.received.find(
          (r) =>
            String(r.headers['x-service-event']) === 'alert.reconciliation_drift.resolved' &&
            JSON.parse(r.raw).alert_id === ethAlert!.alert_id,
        ),
      60_000,
      200,
    );
    const hookSig = parseSignatureHeader(String(resolvedAtHook.headers['x-service-signature']));
    expect(hookSig!.signatures).toContain(computeSignature(hookSig!.timestamp, resolvedAtHook.raw, ALERT_SECRET));
    await eventually(
      'the alert ended in Alertmanager',
      async () => {
        const held = (await am.alerts()).find((a) => a.labels.alert_id === ethAlert!.alert_id);
        return !held || Date.parse(held.endsAt) <= Date.now() ? true : null;
      },
      60_000,
      500,
    );
    // its series gone, the Solana one (still short) kept
    const metrics = await t.node.rt.metrics.registry.metrics();
    expect(metrics).not.toContain(metricOf(ethBalance));
    expect(metrics).toContain(metricOf(solBalance));
    out = await cli();
    expect(out.stdout).not.toContain(ethBalance.id);
    expect(out.stdout).toContain(solBalance.id);

    // acknowledged: understood, so it stops alerting while found with the same difference
    const refused = await op('reconcile:ack', solBalance.id, '--reason', 'service_sk_test_0123456789abcdef0123456789abcdef');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('the reason must be plain words');
    const ack = await op(
      'reconcile:ack',
      solBalance.id,
      '--reason',
      'test: the key was used by hand, funds returned off-chain',
      '--by',
      'ops-oncall',
    );
    expect(ack.code).toBe(0);
    expect(ack.stdout).toContain(`ACKNOWLEDGED address balance address=${sw.address}`);
    expect(ack.stdout).toContain('acknowledged by ops-oncall at ');
    const [solAlert] = await alertOf(solBalance);
    expect(solAlert).toMatchObject({ status: 'resolved', resolution: 'acknowledged' });
    const { events } = await t.call<{ events: Array<Record<string, unknown>> }>('ops.audit', {
      type: 'operator.reconciliation_drift.acknowledged',
    });
    expect(events).toContainEqual(
      expect.objectContaining({
        drift_id: solBalance.id,
        code: 'balance',
        address: sw.address,
        difference: solBalance.difference,
        by: 'ops-oncall',
        reason: 'test: the key was used by hand, funds returned off-chain',
      }),
    );
    expect(events.find((e) => e.drift_id === solBalance.id)).not.toHaveProperty('merchant_id');
    // the next run still finds it, with the same difference: no alert is raised, no series
    const later = await tick();
    expect(find(later, { code: 'balance', address: sw.address })).toEqual([]);
    expect((await alertOf(solBalance)).filter((a) => a.status === 'open')).toEqual([]);
    expect(await t.node.rt.metrics.registry.metrics()).not.toContain(metricOf(solBalance));
    // listed only with --all, with who and why; the resolved one too, naming its run
    out = await cli();
    expect(out.stdout).not.toContain(solBalance.id);
    const all = await op('reconcile', '--deep', '--all');
    expect(all.stdout).toContain(
      `ACKNOWLEDGED address balance address=${sw.address} asset=solana:testnet:SOL difference=${solBalance.difference} id=${solBalance.id}`,
    );
    expect(all.stdout).toContain('(by ops-oncall at ');
    expect(all.stdout).toContain(
      `RESOLVED address balance address=${ew.address} asset=ethereum:testnet:ETH difference=${ethBalance.difference} id=${ethBalance.id}`,
    );
    expect(all.stdout).toContain(`(no longer found by run ${fixed.run_id} at ${fixed.at})`);
    // a resolved drift is not acknowledged
    const late = await op('reconcile:ack', ethBalance.id, '--reason', 'too late');
    expect(late.code).toBe(1);
    expect(late.stdout).toContain(`drift ${ethBalance.id} is resolved`);
  });
});
