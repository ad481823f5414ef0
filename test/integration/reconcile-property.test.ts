/**
 * Adversarial property test of the money paths (issue 18), on a real Hardhat node and the LiteSVM
 * harness, one node with its money-out engines: fast-check draws random sequences of a merchant's actions
 * on both chains — deposits, internal transfers (custody moves), payouts to fresh and to repeated
 * addresses, equal payouts back to back, refunds of paid sessions, x402 redeems by outside payers, agent
 * spends executed on chain —
 * and after each sequence, with every movement final:
 *
 * 1. what reached each outside address on chain is exactly what the completed payouts and refunds to it
 *    say, and what the merchant can still withdraw (its wallets' available balances) is exactly what it
 *    deposited minus what was paid out or refunded minus the fees it was charged, per asset; the fees
 *    charged are exactly what its own transactions (payouts, refunds, ETH sweeps) cost on chain;
 * 2. platform value moves only by booked costs: each gas wallet's change on chain equals the change of its
 *    ledger account (`sys:gas`), and the platform gas parked at an address is there on chain;
 * 3. chain equals ledger at every address of the merchant (its wallets and its sessions' deposit
 *    addresses), computed here from the store and the chain directly;
 * 4. `reconcile --deep` is clean.
 *
 * The number of sequences and their length are bounded so that it fits CI (each sequence is a minute or
 * so of real chain work); a failure stops at once (no shrinking: every run is real chain work) and prints
 * the sequence and the seed to replay.
 */
import fc from 'fast-check';
import { Wallet } from 'ethers';
import { Keypair } from '@solana/web3.js';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { startMoneyNode } from '../helpers/money-node.ts';
import { merchant } from './sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from './chain-listener-helpers.ts';
import { POLICY, attemptBody, createWallet, type WalletRef } from './agents-helpers.ts';
import { signEip3009Proof, buildSolanaProof } from '../../lib/x402/payer.ts';
import { solConnection } from '../../lib/chains/clients.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import { ACCOUNTS, TRANSFERS, postedBalance, type LedgerAccount, type LedgerTransfer } from '../../lib/ledger/index.ts';
import type { ReconcileReport } from '../../lib/treasury/reconcile/run.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(1_800_000);

const RUNS = Number(process.env.PROPERTY_RUNS ?? 8);
type Chain = 'ethereum' | 'solana';
type Token = 'ETH' | 'SOL' | 'USDC';
const NATIVE: Record<Chain, Token> = { ethereum: 'ETH', solana: 'SOL' };

/** what the merchant does; amounts are per mille of what the wallet holds (refusals are fine outcomes) */
type Action =
  | { kind: 'deposit'; chain: Chain; token: Token; units: number }
  | { kind: 'internal'; chain: Chain; token: Token; permille: number }
  | { kind: 'payout'; chain: Chain; token: Token; permille: number; fresh: boolean; fromAgent: boolean }
  | { kind: 'equal'; chain: Chain; token: Token; permille: number }
  | { kind: 'refund'; chain: Chain; token: Token; permille: number }
  | { kind: 'x402'; chain: Chain; units: number }
  | { kind: 'spend'; permille: number };

const chainArb = fc.constantFrom<Chain>('ethereum', 'solana');
const permille = fc.integer({ min: 5, max: 400 });
/** every kind of action equally likely; its chain, token and size drawn after */
const action: fc.Arbitrary<Action> = fc
  .record({
    kind: fc.constantFrom('deposit', 'internal', 'payout', 'equal', 'refund', 'x402', 'spend'),
    chain: chainArb,
    native: fc.boolean(),
    p: permille,
    units: fc.integer({ min: 1, max: 5 }),
    fresh: fc.boolean(),
    fromAgent: fc.boolean(),
  })
  .map(({ kind, chain, native, p, units, fresh, fromAgent }): Action => {
    const token: Token = native ? NATIVE[chain] : 'USDC';
    switch (kind) {
      case 'deposit':
        return { kind, chain, token, units };
      case 'internal':
      case 'refund':
        return { kind, chain, token, permille: p };
      case 'payout':
        return { kind, chain, token, permille: p, fresh, fromAgent };
      case 'equal':
        return { kind, chain, token, permille: Math.min(p, 200) };
      case 'x402':
        return { kind, chain, units: Math.min(units, 3) };
      default:
        return { kind: 'spend', permille: p };
    }
  });

describe('money paths under random merchant actions (Hardhat + LiteSVM)', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let gas: Record<Chain, string>;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    ({
      eth,
      usdc,
      sol,
      mint,
      t,
      stop,
      gasWallets: gas,
    } = await startMoneyNode(
      { AGENTS_SCAN_INTERVAL_MS: '200' },
      { payerUsdc: 10_000_000_000n, gasWei: 10n ** 20n, gasLamports: 1_000_000_000_000n },
    ));
    // the first deep run meets the gas wallets
    expect((await t.call<ReconcileReport>('treasury.reconcile', { deep: true })).ok).toBe(true);
  }, 240_000);

  afterAll(async () => {
    await stop?.();
  });

  const store = () => t.node.rt.store;
  const asset = (chain: Chain, token: Token) => `${chain}:testnet:${token}`;

  /** one merchant, its wallets and what the test knows from the chain side */
  interface World {
    m: RegisteredMerchant;
    main: Record<Chain, WalletRef>;
    agent: Record<Chain, WalletRef>;
    /** the repeated destination of each chain */
    repeated: Record<Chain, string>;
    solPayer: Awaited<ReturnType<SolanaRpcHarness['newWallet']>>;
    /** paid into the merchant from outside, per asset (sessions, x402) */
    deposited: Map<string, bigint>;
    /** payouts and refunds accepted to outside addresses: id → destination, asset (refunds: their session) */
    payouts: Map<string, { destination: string; chain: Chain; token: Token; session?: string }>;
    sessions: string[];
    /** the merchant's paid sessions by rail, newest last */
    paid: Array<{ id: string; chain: Chain; token: Token; amount: bigint }>;
    log: string[];
  }

  const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
  const scan = async () => {
    await t.call('money-out.scan');
  };
  const api = async (w: World, method: string, path: string, body?: unknown) => t.request(method, path, { key: w.m.apiKey, body });
  const available = async (w: World, wallet: WalletRef, token: Token) => {
    const r = await api(w, 'GET', `/v1/wallets/${wallet.id}`);
    return BigInt(r.body.balances.find((b: { token: string }) => b.token === token)?.available_subunits ?? '0');
  };

  async function settle(): Promise<void> {
    await until(
      'every movement final',
      async () => {
        await scan();
        const s = await t.call<{
          transactions: Record<string, number>;
          sweeps: Record<string, number>;
          custody_moves: Record<string, number>;
        }>('money-out.status');
        const open =
          s.transactions.signed +
          s.transactions.sent +
          s.sweeps.waiting +
          s.sweeps.topup +
          s.sweeps.moving +
          s.custody_moves.waiting +
          s.custody_moves.topup +
          s.custody_moves.moving +
          (await store().count('payouts', { status: { $in: ['pending', 'processing'] } })) +
          (await store().count('refunds', { status: { $in: ['pending', 'processing'] } })) +
          (await store().count('x402_redemptions', { status: 'settling' })) +
          (await store().count('ledger_transfers', { status: 'pending', kind: 'settlement' }));
        return open === 0;
      },
      240_000,
    );
  }

  async function deposit(w: World, chain: Chain, token: Token, amount: bigint): Promise<void> {
    const rail = chain === 'ethereum' ? (token === 'ETH' ? RAILS.eth : RAILS.ethUsdc) : token === 'SOL' ? RAILS.sol : RAILS.solUsdc;
    const decimals = token === 'ETH' ? 18 : token === 'SOL' ? 9 : 6;
    const s = await createSession(t, w.m, rail, Number(amount) / 10 ** decimals);
    w.sessions.push(s.session_id);
    if (chain === 'ethereum') {
      if (token === 'ETH') await eth.sendEth(2, s.address, amount);
      else await usdc.transfer(1, s.address, amount);
    } else if (token === 'SOL') await sol.transferSol(w.solPayer, s.address, amount);
    else await sol.transferToken(w.solPayer, s.address, mint.mint, amount);
    add(w.deposited, asset(chain, token), amount);
    w.paid.push({ id: s.session_id, chain, token, amount });
    await sessionWhen(t, w.m, s.session_id, 'deposit counted', (x) => x.status === 'completed', 120_000);
    await settle();
  }

  const unitOf = (token: Token) => (token === 'ETH' ? 10n ** 16n : token === 'SOL' ? 10n ** 8n : 10n ** 6n);

  async function payout(w: World, from: WalletRef, chain: Chain, token: Token, amount: bigint, destination: string) {
    const r = await api(w, 'POST', '/v1/payouts', { wallet_id: from.id, token, destination, amount_subunits: amount.toString() });
    if (r.status === 201 && r.body.execution === 'chain') w.payouts.set(r.body.id, { destination, chain, token });
    return r.status;
  }

  async function x402(w: World, chain: Chain, amount: bigint): Promise<void> {
    const c = await api(w, 'POST', '/v1/x402/challenges', {
      resource: `/r/${w.log.length}`,
      amount_subunits: amount.toString(),
      paymentMethod: { chain, network: 'testnet', token: 'USDC' },
    });
    if (c.status !== 201) throw new Error(`challenge: ${c.status} ${c.text}`);
    let proof: string;
    if (chain === 'ethereum') {
      const outside = Wallet.createRandom();
      await usdc.mint(outside.address, amount);
      const block = await eth.provider.getBlock('latest');
      proof = await signEip3009Proof(outside, c.body.challenge, {
        chainId: eth.chainId,
        tokenName: 'Test USD Coin',
        tokenVersion: '2',
        // valid by the node's clock and by the chain's, which runs ahead when blocks come faster than seconds
        nowSeconds: Math.min(block!.timestamp, Math.floor(Date.now() / 1000)),
        validForSeconds: 3600,
      });
    } else {
      const payer = Keypair.generate();
      await sol.airdrop(payer.publicKey.toBase58(), 100_000_000n);
      await sol.mintTo(mint.mint, payer.publicKey.toBase58(), amount);
      await sol.createAssociatedTokenAccount(w.main.solana.address, mint.mint);
      const { blockhash } = await solConnection(sol.url).getLatestBlockhash();
      proof = buildSolanaProof(payer, c.body.challenge, { feePayer: c.body.fee_payer, recentBlockhash: blockhash });
    }
    const r = await api(w, 'POST', '/v1/x402/redeem', { proof, resource: `/r/${w.log.length}` });
    if (r.status !== 200 && r.status !== 202) throw new Error(`redeem: ${r.status} ${r.text}`);
    add(w.deposited, asset(chain, 'USDC'), amount);
  }

  async function act(w: World, a: Action): Promise<string> {
    switch (a.kind) {
      case 'deposit': {
        const amount = BigInt(a.units) * unitOf(a.token) * (a.token === 'USDC' ? 3n : 1n);
        await deposit(w, a.chain, a.token, amount);
        return `deposit ${amount} ${a.chain} ${a.token}`;
      }
      case 'internal': {
        const amount = ((await available(w, w.main[a.chain], a.token)) * BigInt(a.permille)) / 1000n;
        if (amount === 0n) return 'internal: nothing to move';
        const s = await payout(w, w.main[a.chain], a.chain, a.token, amount, w.agent[a.chain].address);
        await settle();
        return `internal ${amount} ${a.chain} ${a.token} → agent: ${s}`;
      }
      case 'payout': {
        const from = a.fromAgent ? w.agent[a.chain] : w.main[a.chain];
        const amount = ((await available(w, from, a.token)) * BigInt(a.permille)) / 1000n;
        if (amount === 0n) return 'payout: nothing to pay';
        const dest = a.fresh
          ? a.chain === 'ethereum'
            ? Wallet.createRandom().address
            : Keypair.generate().publicKey.toBase58()
          : w.repeated[a.chain];
        const s = await payout(w, from, a.chain, a.token, amount, dest);
        await settle();
        return `payout ${amount} ${a.chain} ${a.token} from ${a.fromAgent ? 'agent' : 'main'} to ${a.fresh ? 'fresh' : 'repeated'}: ${s}`;
      }
      case 'equal': {
        const amount = ((await available(w, w.main[a.chain], a.token)) * BigInt(a.permille)) / 1000n;
        if (amount === 0n) return 'equal: nothing to pay';
        const s = await Promise.all([0, 1].map(() => payout(w, w.main[a.chain], a.chain, a.token, amount, w.repeated[a.chain])));
        await settle();
        return `two equal payouts ${amount} ${a.chain} ${a.token}: ${s.join(',')}`;
      }
      case 'refund': {
        const s = [...w.paid].reverse().find((x) => x.chain === a.chain && x.token === a.token);
        if (!s) return 'refund: no paid session';
        const amount = (s.amount * BigInt(a.permille)) / 1000n;
        if (amount === 0n) return 'refund: nothing to refund';
        const dest = a.chain === 'ethereum' ? Wallet.createRandom().address : Keypair.generate().publicKey.toBase58();
        const r = await api(w, 'POST', `/v1/payment_sessions/${s.id}/refunds`, { amount_subunits: amount.toString(), destination: dest });
        if (r.status === 201 && r.body.execution === 'chain')
          w.payouts.set(r.body.id, { destination: dest, chain: a.chain, token: a.token, session: s.id });
        await settle();
        return `refund ${amount} ${a.chain} ${a.token}: ${r.status}`;
      }
      case 'x402': {
        const amount = BigInt(a.units) * 1_000_000n;
        await x402(w, a.chain, amount);
        await settle();
        return `x402 ${amount} ${a.chain} USDC`;
      }
      case 'spend': {
        const amount = ((await available(w, w.agent.ethereum, 'USDC')) * BigInt(a.permille)) / 1000n;
        if (amount === 0n) return 'spend: nothing to spend';
        const target = Wallet.createRandom().address;
        const r = await api(w, 'POST', `/v1/agent-wallets/${w.agent.ethereum.id}/spend-attempts`, attemptBody(target, amount));
        let body = r.body;
        if (body?.status === 'approval_required')
          body = (await api(w, 'POST', `/v1/agent-wallets/${w.agent.ethereum.id}/spend-attempts/${body.id}/approve`)).body;
        const payoutId = body?.settlement?.payout_id;
        if (payoutId) w.payouts.set(payoutId, { destination: target, chain: 'ethereum', token: 'USDC' });
        await settle();
        return `agent spend ${amount} USDC: ${body?.status ?? r.status}`;
      }
    }
  }

  /** the merchant's world: wallets on both chains, an agent on each, funded on every rail */
  async function world(): Promise<World> {
    const m = await merchant(t);
    const solPayer = await sol.newWallet(50_000_000_000n);
    await sol.mintTo(mint.mint, solPayer.address, 1_000_000_000n);
    const w: World = {
      m,
      main: {} as World['main'],
      agent: {} as World['agent'],
      repeated: { ethereum: Wallet.createRandom().address, solana: Keypair.generate().publicKey.toBase58() },
      solPayer,
      deposited: new Map(),
      payouts: new Map(),
      sessions: [],
      paid: [],
      log: [],
    };
    await deposit(w, 'ethereum', 'ETH', 10n ** 17n);
    await deposit(w, 'ethereum', 'USDC', 30_000_000n);
    await deposit(w, 'solana', 'SOL', 2_000_000_000n);
    await deposit(w, 'solana', 'USDC', 30_000_000n);
    const list = (await api(w, 'GET', '/v1/wallets?limit=100')).body.data as Array<WalletRef & { is_default: boolean }>;
    for (const chain of ['ethereum', 'solana'] as const) {
      w.main[chain] = list.find((x) => x.chain === chain && x.is_default)!;
      w.agent[chain] = await createWallet(t, m, 'agent', chain);
    }
    // the agent on Ethereum spends under a policy and pays its own gas
    await api(w, 'PUT', `/v1/agent-wallets/${w.agent.ethereum.id}/policy`, POLICY);
    await payout(w, w.main.ethereum, 'ethereum', 'USDC', 10_000_000n, w.agent.ethereum.address);
    await payout(w, w.main.ethereum, 'ethereum', 'ETH', 2n * 10n ** 16n, w.agent.ethereum.address);
    await payout(w, w.main.solana, 'solana', 'SOL', 300_000_000n, w.agent.solana.address);
    await settle();
    return w;
  }

  async function gasBooks(): Promise<Record<Chain, { chain: bigint; books: bigint }>> {
    const out = {} as Record<Chain, { chain: bigint; books: bigint }>;
    for (const chain of ['ethereum', 'solana'] as const) {
      const acc = await store().get<LedgerAccount>(ACCOUNTS, `acc:sys:gas:${asset(chain, NATIVE[chain])}`);
      const onChain = chain === 'ethereum' ? await eth.provider.getBalance(gas.ethereum) : sol.balance(gas.solana);
      out[chain] = { chain: onChain, books: acc ? postedBalance(acc) : 0n };
    }
    return out;
  }

  /** what a merchant-paid transaction cost on chain: its fee and the rent of the token accounts it created */
  async function chainCost(chain: Chain, hash: string): Promise<bigint> {
    if (chain === 'ethereum') {
      const r = await eth.receipt(hash);
      return r!.gasUsed * r!.gasPrice;
    }
    const tx = sol.getLoggedTransaction(hash)!;
    const before = new Set(tx.meta.preTokenBalances.map((b) => b.accountIndex));
    const rent = tx.meta.postTokenBalances
      .filter((b) => !before.has(b.accountIndex) && tx.meta.preBalances[b.accountIndex] === 0n)
      .reduce((s, b) => s + tx.meta.postBalances[b.accountIndex]!, 0n);
    return tx.meta.fee + rent;
  }

  async function check(w: World, gasBefore: Awaited<ReturnType<typeof gasBooks>>): Promise<void> {
    await settle();
    const wallets = [w.main.ethereum, w.main.solana, w.agent.ethereum, w.agent.solana];
    const ids = new Set(wallets.map((x) => x.id));
    // 1. outside addresses received exactly the completed payouts; the merchant holds exactly the rest
    const paidOut = new Map<string, bigint>();
    const arrived = new Map<string, bigint>();
    const charged = new Map<string, bigint>();
    let cost = new Map<string, bigint>();
    for (const [id, p] of w.payouts) {
      const po = (await api(w, 'GET', p.session ? `/v1/payment_sessions/${p.session}/refunds/${id}` : `/v1/payouts/${id}`)).body;
      expect(['completed', 'failed']).toContain(po.status);
      const key = `${p.destination}|${asset(p.chain, p.token)}`;
      arrived.set(key, arrived.get(key) ?? 0n);
      if (po.status === 'completed') {
        add(paidOut, asset(p.chain, p.token), BigInt(po.amount_subunits));
        add(arrived, key, BigInt(po.amount_subunits));
      }
      const row = await store().get<ChainTxDoc>(CHAIN_TXS, `${p.session ? 'refund' : 'payout'}:${id}`);
      if (row?.block_number) add(cost, asset(p.chain, NATIVE[p.chain]), await chainCost(p.chain, row.tx_hash));
    }
    for (const [key, want] of arrived) {
      const [dest, a] = key.split('|') as [string, string];
      const [chain, , token] = a.split(':') as [Chain, string, Token];
      const has =
        chain === 'ethereum'
          ? token === 'ETH'
            ? await eth.provider.getBalance(dest)
            : await usdc.balanceOf(dest)
          : token === 'SOL'
            ? sol.balance(dest)
            : await sol.tokenBalance(dest, mint.mint);
      expect({ dest, asset: a, received: has }).toEqual({ dest, asset: a, received: want });
    }
    // the ETH sweeps' gas is the merchant's too (it comes out of the swept ETH)
    for (const s of await store().find<ChainTxDoc>(CHAIN_TXS, { purpose: 'sweep', status: 'confirmed' })) {
      const sweep = await store().get<{ id: string; session_id: string; token: string }>('sweeps', s.ref!);
      if (sweep && sweep.token === 'ETH' && w.sessions.includes(sweep.session_id))
        add(cost, asset('ethereum', 'ETH'), await chainCost('ethereum', s.tx_hash));
    }
    for (const tr of await store().find<LedgerTransfer>(TRANSFERS, { kind: 'fee', status: 'posted' })) {
      const owner = tr.debit_account.slice(4, tr.debit_account.indexOf(':', 4));
      if (ids.has(owner)) add(charged, tr.asset, BigInt(tr.amount));
    }
    cost = new Map([...cost].filter(([, v]) => v > 0n));
    expect(Object.fromEntries(charged)).toEqual(Object.fromEntries(cost));
    for (const chain of ['ethereum', 'solana'] as const) {
      for (const token of [NATIVE[chain], 'USDC'] as const) {
        const a = asset(chain, token);
        let holds = 0n;
        for (const x of wallets.filter((y) => y.chain === chain)) holds += await available(w, x, token);
        const owed = (w.deposited.get(a) ?? 0n) - (paidOut.get(a) ?? 0n) - (charged.get(a) ?? 0n);
        expect({ asset: a, withdrawable: holds }).toEqual({ asset: a, withdrawable: owed });
      }
    }
    // 2. the gas wallets moved exactly by what the ledger books for them
    const gasAfter = await gasBooks();
    for (const chain of ['ethereum', 'solana'] as const)
      expect({ chain, moved: gasAfter[chain].chain - gasBefore[chain].chain }).toEqual({
        chain,
        moved: gasAfter[chain].books - gasBefore[chain].books,
      });
    // 3. every address of the merchant holds on chain what the ledger puts there
    const parked = await store().find<LedgerAccount>(ACCOUNTS, { owner: { $gte: 'sys:gas@', $lt: 'sys:gas@~' } });
    const at = (address: string, a: string) =>
      parked
        .filter((p) => p.owner.slice(8).toLowerCase() === address.toLowerCase() && p.asset === a)
        .reduce((s, p) => s + postedBalance(p), 0n);
    const addresses: Array<{ address: string; chain: Chain; wallet?: string }> = wallets.map((x) => ({
      address: x.address,
      chain: x.chain as Chain,
      wallet: x.id,
    }));
    for (const id of w.sessions) {
      const s = await store().get<{ id: string; address: string; chain: Chain }>('payment_sessions', id);
      addresses.push({ address: s!.address, chain: s!.chain });
    }
    for (const x of addresses) {
      for (const token of [NATIVE[x.chain], 'USDC'] as const) {
        const a = asset(x.chain, token);
        const acc = x.wallet ? await store().get<LedgerAccount>(ACCOUNTS, `acc:${x.wallet}:${a}`) : null;
        const books = (acc ? postedBalance(acc) : 0n) + at(x.address, a);
        const onChain =
          x.chain === 'ethereum'
            ? token === 'ETH'
              ? await eth.provider.getBalance(x.address)
              : await usdc.balanceOf(x.address)
            : token === 'SOL'
              ? sol.balance(x.address)
              : await sol.tokenBalance(x.address, mint.mint);
        // a Solana deposit address may keep lamports its token account's creation left (the payer's)
        if (!x.wallet && x.chain === 'solana' && token === 'SOL') expect(onChain).toBeGreaterThanOrEqual(books);
        else expect({ address: x.address, asset: a, chain: onChain }).toEqual({ address: x.address, asset: a, chain: books });
      }
    }
    // 4. reconciliation agrees
    const r = await t.call<ReconcileReport>('treasury.reconcile', { deep: true });
    expect(r.drifts).toEqual([]);
    expect(r.ok).toBe(true);
  }

  it('the merchant never withdraws more than it deposited less payouts and fees; the platform moves only by booked costs; chain equals ledger; reconcile --deep is clean', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 3, maxLength: 10 }), async (actions) => {
        const before = await gasBooks();
        const w = await world();
        try {
          for (const a of actions) w.log.push(await act(w, a));
          await check(w, before);
        } catch (e) {
          throw new Error(`after ${JSON.stringify(w.log)}: ${(e as Error).message}`);
        }
      }),
      { numRuns: RUNS, endOnFailure: true, verbose: 1 },
    );
  });
});
