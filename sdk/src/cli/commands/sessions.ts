/** `payments sessions create|get|list|simulate`: payment sessions. */
import { Option, type Command } from 'commander';
import type { PaymentSession } from '../../client.ts';
import { json, moreHint, num, type Cli } from '../context.ts';
import { details, table } from '../output.ts';

const SESSION_FIELDS = [
  'session_id',
  'status',
  'expected_amount',
  'received_amount',
  'currency',
  'address',
  'expires_at',
  'payment_url',
  'demo',
];

const summary = (s: PaymentSession) => Object.fromEntries(SESSION_FIELDS.map((k) => [k, (s as Record<string, unknown>)[k]]));

type Status = 'pending' | 'partial_paid' | 'completed' | 'expired';

interface CreateOptions {
  amount: number;
  chain: string;
  token: string;
  network: 'testnet' | 'mainnet';
  expiresIn: string;
  metadata?: Record<string, unknown>;
  idempotencyKey?: string;
}

export function sessionCommands(program: Command, cli: Cli): void {
  const sessions = program.command('sessions').description('payment sessions');
  sessions
    .command('create')
    .description('create a payment session')
    .requiredOption('--amount <amount>', 'amount in token units, e.g. 12.5', num)
    .option('--chain <chain>', 'chain', 'ethereum')
    .option('--token <token>', 'token', 'USDC')
    .addOption(new Option('--network <network>', 'network').choices(['testnet', 'mainnet']).default('testnet'))
    .option('--expires-in <duration>', 'lifetime such as 15m, 1h', '15m')
    .option('--metadata <json>', 'a JSON object kept on the session', json)
    .option('--idempotency-key <key>', 'makes a retry safe (one is generated otherwise)')
    .action(async (o: CreateOptions) => {
      const s = await cli.client().sessions.create(
        {
          amount: o.amount,
          expires_in: o.expiresIn,
          paymentMethod: { methodID: 0, chain: o.chain, token: o.token, network: o.network },
          ...(o.metadata ? { metadata: o.metadata } : {}),
        },
        { idempotencyKey: o.idempotencyKey },
      );
      cli.out().print(s, () => details(summary(s)));
    });
  sessions
    .command('get <session_id>')
    .description('show a payment session')
    .action(async (id: string) => {
      const s = await cli.client().sessions.get(id);
      cli.out().print(s, () => details(summary(s)));
    });
  sessions
    .command('list')
    .description('your payment sessions, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'partial_paid', 'completed', 'expired']))
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page (printed after a full page)')
    .action(async (o: { status?: Status; limit?: number; cursor?: string }) => {
      const page = await cli.client().sessions.list({ status: o.status, limit: o.limit, cursor: o.cursor });
      const o2 = cli.out();
      o2.print(page, () =>
        table(page.data.map(summary), ['session_id', 'status', 'expected_amount', 'received_amount', 'currency', 'expires_at']),
      );
      moreHint(o2, page.next_cursor);
    });
  sessions
    .command('simulate <session_id>')
    .description('complete a sandbox session without a chain transaction')
    .action(async (id: string) => {
      const s = await cli.client().sessions.simulate(id);
      cli.out().print(s, () => details(summary(s)));
    });
}
