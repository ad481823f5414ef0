/**
 * Money out: `payments payouts create|get|list` and `payments refunds create|get|list`. A simulated
 * payout or refund (sandbox money, nothing sent on chain) says so in every table and detail view.
 */
import type { Command } from 'commander';
import type { Payout, Refund } from '../../client.ts';
import { moreHint, num, type Cli } from '../context.ts';
import { details, table } from '../output.ts';

/** A payout as people read it: a simulated one (sandbox money, nothing sent on chain) says so. */
function payoutRow(p: Payout): Record<string, unknown> {
  const r = p as unknown as Record<string, unknown>;
  return { ...r, simulated: r.simulated ? 'yes: sandbox, nothing sent' : 'no' };
}
const PAYOUT_FIELDS = ['id', 'status', 'simulated', 'amount', 'token', 'chain', 'network', 'destination', 'tx_hash'];

/** A refund as people read it, like a payout. */
const refundRow = (r: Refund) => payoutRow(r as unknown as Payout);
const REFUND_FIELDS = [
  'id',
  'session_id',
  'status',
  'simulated',
  'amount',
  'token',
  'chain',
  'network',
  'destination',
  'tx_hash',
  'fee_subunits',
];

interface CreatePayoutOptions {
  wallet: string;
  amount: number;
  token: string;
  destination: string;
  idempotencyKey?: string;
}

export function payoutCommands(program: Command, cli: Cli): void {
  const payouts = program.command('payouts').description('payouts from your wallets');
  payouts
    .command('create')
    .description('pay out from a wallet')
    .requiredOption('--wallet <wallet_id>', 'the wallet (see `payments wallets list`)')
    .requiredOption('--amount <amount>', 'amount in token units', num)
    .requiredOption('--token <token>', 'token, e.g. USDC')
    .requiredOption('--destination <address>', 'destination address')
    .option('--idempotency-key <key>', 'makes a retry safe (one is generated otherwise)')
    .action(async (o: CreatePayoutOptions) => {
      const p = await cli
        .client()
        .payouts.create(
          { wallet_id: o.wallet, amount: o.amount, token: o.token, destination: o.destination },
          { idempotencyKey: o.idempotencyKey },
        );
      cli.out().print(p, () => details(payoutRow(p), [...PAYOUT_FIELDS, 'created_at']));
    });
  payouts
    .command('get <payout_id>')
    .description('show a payout')
    .action(async (id: string) => {
      const p = await cli.client().payouts.get(id);
      cli.out().print(p, () => details(payoutRow(p), [...PAYOUT_FIELDS, 'failure_reason', 'created_at', 'completed_at']));
    });
  payouts
    .command('list')
    .description('your payouts, newest first')
    .option('--wallet <wallet_id>', 'only this wallet')
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (o: { wallet?: string; limit?: number; cursor?: string }) => {
      const page = await cli.client().payouts.list({ wallet_id: o.wallet, limit: o.limit, cursor: o.cursor });
      const o2 = cli.out();
      o2.print(page, () =>
        table(
          page.data.map((p) => ({ ...payoutRow(p), simulated: p.simulated ? 'yes' : 'no' })),
          ['id', 'status', 'simulated', 'amount', 'token', 'network', 'destination', 'created_at'],
        ),
      );
      if (!o2.json && page.data.some((p) => p.simulated)) o2.info('simulated: sandbox money, nothing was sent on chain');
      moreHint(o2, page.next_cursor);
    });
}

interface CreateRefundOptions {
  amountSubunits?: string;
  destination?: string;
  reason?: string;
  idempotencyKey?: string;
}

export function refundCommands(program: Command, cli: Cli): void {
  const refunds = program.command('refunds').description('refunds of your payment sessions');
  refunds
    .command('create <session_id>')
    .description('refund a session: by default to the address that paid, its excess when overpaid, else everything left')
    .option('--amount-subunits <n>', 'amount in smallest units (default: the excess of an overpaid session, else everything left)')
    .option('--destination <address>', 'where to send it (default: the address that paid the session)')
    .option('--reason <text>', 'kept on the refund, e.g. requested_by_customer')
    .option('--idempotency-key <key>', 'makes a retry safe (one is generated otherwise)')
    .action(async (id: string, o: CreateRefundOptions) => {
      const r = await cli.client().refunds.create(
        id,
        {
          ...(o.amountSubunits ? { amount_subunits: o.amountSubunits } : {}),
          ...(o.destination ? { destination: o.destination } : {}),
          ...(o.reason ? { reason: o.reason } : {}),
        },
        { idempotencyKey: o.idempotencyKey },
      );
      cli.out().print(r, () => details(refundRow(r), [...REFUND_FIELDS, 'created_at']));
    });
  refunds
    .command('get <session_id> <refund_id>')
    .description('show a refund')
    .action(async (id: string, refundId: string) => {
      const r = await cli.client().refunds.get(id, refundId);
      cli.out().print(r, () => details(refundRow(r), [...REFUND_FIELDS, 'failure_reason', 'created_at', 'completed_at']));
    });
  refunds
    .command('list <session_id>')
    .description("a session's refunds, newest first")
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (id: string, o: { limit?: number; cursor?: string }) => {
      const page = await cli.client().refunds.list(id, { limit: o.limit, cursor: o.cursor });
      const o2 = cli.out();
      o2.print(page, () =>
        table(
          page.data.map((r) => ({ ...refundRow(r), simulated: r.simulated ? 'yes' : 'no' })),
          ['id', 'status', 'simulated', 'amount', 'token', 'destination', 'created_at'],
        ),
      );
      moreHint(o2, page.next_cursor);
    });
}
