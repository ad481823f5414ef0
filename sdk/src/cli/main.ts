/**
 * The `payments` CLI (commander). Every command has --help; --json prints machine-readable output on
 * stdout (people get tables; status lines go to stderr); exit codes are in output.ts (EXIT). The API key
 * comes from PAYMENTS_API_KEY or the profile file that `payments login` / `payments register` write
 * (mode 0600); it is never printed.
 */
import { Command, CommanderError, Option } from 'commander';
import { PaymentsClient, type Event, type PaymentSession, type Payout, type Refund, type Wallet } from '../client.ts';
import { PaymentsError } from '../errors.ts';
import { register } from '../node.ts';
import type { PowProgress } from '../pow.ts';
import { DEFAULT_BASE_URL, configPath, loadProfile, saveProfile, type Profile } from './profile.ts';
import { CliError, EXIT, details, exitCodeOf, output, table, type Out } from './output.ts';
import { ask, closePrompts } from './prompt.ts';
import { listen } from './listen.ts';
import { trigger, TRIGGERABLE } from './trigger.ts';

interface Globals {
  json?: boolean;
  profile: string;
  baseUrl?: string;
}

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
const EXIT_HELP = `
Exit codes: 0 ok, 1 unexpected error, 2 usage, 3 bad request (code 3), 4 missing or refused credentials (code 7),
5 not found (code 2), 6 conflict (code 5), 7 rate limited (code 4), 8 service unavailable or unreachable.
Credentials: PAYMENTS_API_KEY, or the profile file (${'$'}PAYMENTS_CONFIG, default ~/.config/payments/config.json) that
\`payments login\` or \`payments register\` writes with mode 0600. PAYMENTS_BASE_URL and PAYMENTS_WEBHOOK_SECRET override it too.`;

function num(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new CliError(`not a number: ${v}`);
  return n;
}

function json(v: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(v) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    /* below */
  }
  throw new CliError('--metadata must be a JSON object');
}

function progressReporter(out: Out): (p: PowProgress) => void {
  let last = 0;
  const tty = process.stderr.isTTY;
  return (p) => {
    const pct = Math.min(99, Math.floor((100 * p.tried) / p.expected));
    if (tty) process.stderr.write(`\rSolving the proof of work… ${pct}% of the expected work (${p.tried.toLocaleString('en')} hashes)`);
    else if (Date.now() - last >= 1000) {
      last = Date.now();
      out.info(`Solving the proof of work… ${p.tried} hashes, about ${pct}% of the expected work`);
    }
  };
}

/** A POSIX shell single-quoted word. */
const shellQuote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;

/** What to try after credentials are saved (stderr, so --json output stays one document). */
function nextSteps(o: Out): void {
  if (o.json) return;
  o.info(
    [
      'Next, try:',
      '  npx payments trigger payment_session.completed                # a sandbox session paid by simulation, and its event',
      '  npx payments listen --forward-to http://localhost:4242/hooks  # your events, signed, forwarded to a local endpoint',
      '  eval "$(npx payments env)"                                    # your API key in $PAYMENTS_API_KEY, for curl',
    ].join('\n'),
  );
}

const summary = (s: PaymentSession) => Object.fromEntries(SESSION_FIELDS.map((k) => [k, (s as Record<string, unknown>)[k]]));

function eventSubject(e: Event): string {
  const r = e as Record<string, unknown>;
  return String(r.refund_id ?? r.session_id ?? r.payout_id ?? '');
}

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

function balancesText(w: Wallet): string {
  return (w.balances ?? []).map((b) => `${(b as Record<string, unknown>).available} ${(b as Record<string, unknown>).token}`).join(', ');
}

export function buildProgram(): Command {
  const program = new Command('payments')
    .description('Command-line client of the stablecoin payment service')
    .option('--json', 'machine-readable output on stdout')
    .option('--profile <name>', 'profile of the config file to use', 'default')
    .option('--base-url <url>', `the service (default: the profile's, PAYMENTS_BASE_URL or ${DEFAULT_BASE_URL})`)
    .addHelpText('after', EXIT_HELP)
    .showHelpAfterError()
    .exitOverride();

  const globals = (): Globals => program.opts<Globals>();
  const out = () => output(Boolean(globals().json));
  const profile = (): Profile => loadProfile(globals().profile);
  const baseUrl = () => globals().baseUrl ?? profile().base_url ?? DEFAULT_BASE_URL;
  const client = (): PaymentsClient => {
    const key = profile().api_key;
    if (!key) throw new CliError('no API key: set PAYMENTS_API_KEY or run `payments login` (or `payments register`)', EXIT.AUTH);
    return new PaymentsClient({ baseUrl: baseUrl(), apiKey: key });
  };

  program
    .command('login')
    .description('store an API key (read from stdin, not echoed) in the profile file, mode 0600')
    .option('--with-webhook-secret', 'also ask for the webhook secret that `listen` signs with')
    .action(async (o: { withWebhookSecret?: boolean }) => {
      const apiKey = await ask('API key: ', { secret: true });
      const webhookSecret = o.withWebhookSecret ? await ask('Webhook secret: ', { secret: true }) : undefined;
      closePrompts();
      const me = await new PaymentsClient({ baseUrl: baseUrl(), apiKey }).me();
      const path = saveProfile(globals().profile, {
        base_url: baseUrl(),
        api_key: apiKey,
        merchant_id: me.id,
        ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
      });
      out().print(
        { merchant_id: me.id, name: me.name, profile: globals().profile, config: path },
        () => `Logged in as ${me.name} (${me.id}); credentials saved to ${path} (mode 0600)`,
      );
      nextSteps(out());
    });

  program
    .command('register')
    .description('register a sandbox merchant: email code (asked on stdin), proof of work, credentials saved to the profile')
    .requiredOption('--email <email>', 'your email address (a code is sent to it)')
    .requiredOption('--name <name>', "the merchant's display name")
    .option('--webhook-url <url>', 'where webhooks are POSTed')
    .option('--invitation-token <token>', 'an invitation from an operator')
    .action(async (o: { email: string; name: string; webhookUrl?: string; invitationToken?: string }) => {
      const o2 = out();
      const merchant = await register({
        baseUrl: baseUrl(),
        email: o.email,
        name: o.name,
        webhookUrl: o.webhookUrl,
        invitationToken: o.invitationToken,
        getCode: async ({ email }) => ask(`Enter the 6-digit code sent to ${email}: `),
        onStep: (step) => {
          if (step === 'proof_of_work') o2.info('Solving the proof of work on a worker thread…');
          if (step === 'register' && process.stderr.isTTY) process.stderr.write('\n');
        },
        onProgress: progressReporter(o2),
      });
      closePrompts();
      const path = saveProfile(globals().profile, {
        base_url: baseUrl(),
        api_key: merchant.api_key,
        merchant_id: merchant.id,
        ...(merchant.webhook_secret ? { webhook_secret: merchant.webhook_secret } : {}),
      });
      const shown = {
        id: merchant.id,
        name: merchant.name,
        email: merchant.email,
        sandbox: merchant.sandbox,
        webhook_url: merchant.webhook_url ?? null,
        config: path,
      };
      o2.print(shown, () => `${details(shown)}\nAPI key and webhook secret saved to ${path} (mode 0600); they are shown nowhere else.`);
      nextSteps(o2);
    });

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
    .action(
      async (o: {
        amount: number;
        chain: string;
        token: string;
        network: 'testnet' | 'mainnet';
        expiresIn: string;
        metadata?: Record<string, unknown>;
        idempotencyKey?: string;
      }) => {
        const s = await client().sessions.create(
          {
            amount: o.amount,
            expires_in: o.expiresIn,
            paymentMethod: { methodID: 0, chain: o.chain, token: o.token, network: o.network },
            ...(o.metadata ? { metadata: o.metadata } : {}),
          },
          { idempotencyKey: o.idempotencyKey },
        );
        out().print(s, () => details(summary(s)));
      },
    );
  sessions
    .command('get <session_id>')
    .description('show a payment session')
    .action(async (id: string) => {
      const s = await client().sessions.get(id);
      out().print(s, () => details(summary(s)));
    });
  sessions
    .command('list')
    .description('your payment sessions, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'partial_paid', 'completed', 'expired']))
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page (printed after a full page)')
    .action(async (o: { status?: 'pending' | 'partial_paid' | 'completed' | 'expired'; limit?: number; cursor?: string }) => {
      const page = await client().sessions.list({ status: o.status, limit: o.limit, cursor: o.cursor });
      const o2 = out();
      o2.print(page, () =>
        table(page.data.map(summary), ['session_id', 'status', 'expected_amount', 'received_amount', 'currency', 'expires_at']),
      );
      if (!o2.json && page.next_cursor) o2.info(`more: --cursor ${page.next_cursor}`);
    });
  sessions
    .command('simulate <session_id>')
    .description('complete a sandbox session without a chain transaction')
    .action(async (id: string) => {
      const s = await client().sessions.simulate(id);
      out().print(s, () => details(summary(s)));
    });

  const events = program.command('events').description('your events (every webhook, whatever its delivery)');
  events
    .command('list')
    .description('events, newest first')
    .option('--type <types>', 'only these event types, comma-separated')
    .option('--created-after <time>', 'only events created after this ISO time')
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (o: { type?: string; createdAfter?: string; limit?: number; cursor?: string }) => {
      const page = await client().events.list({ type: o.type, created_after: o.createdAfter, limit: o.limit, cursor: o.cursor });
      const o2 = out();
      o2.print(page, () =>
        table(
          page.data.map((e) => ({ ...e, subject: eventSubject(e) })),
          ['id', 'event_type', 'subject', 'status', 'created_at'],
        ),
      );
      if (!o2.json && page.next_cursor) o2.info(`more: --cursor ${page.next_cursor}`);
    });
  events
    .command('get <event_id>')
    .description('show one event')
    .action(async (id: string) => {
      const e = await client().events.get(id);
      out().print(e, () => details(e as Record<string, unknown>));
    });
  events
    .command('resend <event_id>')
    .description('deliver an event to your webhook_url again now')
    .action(async (id: string) => {
      const c = client();
      const delivery = await c.events.resend(id).catch((e: unknown) => {
        if (e instanceof Error && /cannot be resent/.test(e.message)) throw new CliError(e.message);
        throw e;
      });
      const last = delivery.attempts[delivery.attempts.length - 1];
      out().print(
        delivery,
        () => `${id}: ${delivery.status}; last attempt ${last ? `${last.status ?? last.error} at ${last.at}` : 'none'}`,
      );
    });

  program
    .command('listen')
    .description('stream your events and forward each, signed as in production, to a local URL')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:4242/webhooks')
    .option('--type <types>', 'only these event types, comma-separated')
    .option('--last-event-id <id>', 'replay every event after this stream position or evt_ id first')
    .action(async (o: { forwardTo: string; type?: string; lastEventId?: string }) => {
      const c = client();
      const secret = profile().webhook_secret;
      if (!secret)
        throw new CliError('no webhook secret to sign with: set PAYMENTS_WEBHOOK_SECRET or run `payments login --with-webhook-secret`');
      const o2 = out();
      const controller = new AbortController();
      // kept until the process ends: Ctrl-C reaches this process and, through npx, a second time as npm
      // forwards it; either one stops the stream and the command ends with 0, not killed by the signal
      const stop = () => controller.abort();
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await listen(c, {
        forwardTo: o.forwardTo,
        secret,
        type: o.type,
        lastEventId: o.lastEventId,
        signal: controller.signal,
        onReady: () => o2.info(`Ready: forwarding events to ${o.forwardTo} (Ctrl-C to stop)`),
        onReconnect: (e) => o2.info(`stream interrupted (${(e as Error).message}); reconnecting`),
        onRefused: (event, delayMs) =>
          o2.info(`${o.forwardTo} refused ${event.id} (is your endpoint running?); trying again in ${delayMs / 1000} s`),
        onForwarded: (f) =>
          o2.print(
            {
              id: f.event.id,
              event_type: f.event.event_type,
              position: f.position,
              status: f.status,
              ...(f.error ? { error: f.error } : {}),
            },
            () => `${new Date().toISOString()}  ${f.event.event_type}  ${f.event.id}  -> ${f.status ?? `failed (${f.error})`}`,
          ),
      });
      o2.info('Stopped.');
    });

  program
    .command('trigger <event_type>')
    .description(`make a sandbox session (or payout) reach an event: ${TRIGGERABLE.join(', ')}`)
    .option('--amount <amount>', 'amount in token units', num, 1)
    .option('--chain <chain>', 'chain', 'ethereum')
    .option('--token <token>', 'token', 'USDC')
    .option('--destination <address>', 'payout destination (payout events)')
    .action(async (type: string, o: { amount: number; chain: string; token: string; destination?: string }) => {
      const o2 = out();
      const event = await trigger(client(), type, { ...o, info: (t) => o2.info(t) });
      o2.print(event, () => `${event.event_type} ${event.id}\n${details(event as Record<string, unknown>)}`);
    });

  const payouts = program.command('payouts').description('payouts from your wallets');
  payouts
    .command('create')
    .description('pay out from a wallet')
    .requiredOption('--wallet <wallet_id>', 'the wallet (see `payments wallets list`)')
    .requiredOption('--amount <amount>', 'amount in token units', num)
    .requiredOption('--token <token>', 'token, e.g. USDC')
    .requiredOption('--destination <address>', 'destination address')
    .option('--idempotency-key <key>', 'makes a retry safe (one is generated otherwise)')
    .action(async (o: { wallet: string; amount: number; token: string; destination: string; idempotencyKey?: string }) => {
      const p = await client().payouts.create(
        { wallet_id: o.wallet, amount: o.amount, token: o.token, destination: o.destination },
        { idempotencyKey: o.idempotencyKey },
      );
      out().print(p, () => details(payoutRow(p), [...PAYOUT_FIELDS, 'created_at']));
    });
  payouts
    .command('get <payout_id>')
    .description('show a payout')
    .action(async (id: string) => {
      const p = await client().payouts.get(id);
      out().print(p, () => details(payoutRow(p), [...PAYOUT_FIELDS, 'failure_reason', 'created_at', 'completed_at']));
    });
  payouts
    .command('list')
    .description('your payouts, newest first')
    .option('--wallet <wallet_id>', 'only this wallet')
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (o: { wallet?: string; limit?: number; cursor?: string }) => {
      const page = await client().payouts.list({ wallet_id: o.wallet, limit: o.limit, cursor: o.cursor });
      const o2 = out();
      o2.print(page, () =>
        table(
          page.data.map((p) => ({ ...payoutRow(p), simulated: p.simulated ? 'yes' : 'no' })),
          ['id', 'status', 'simulated', 'amount', 'token', 'network', 'destination', 'created_at'],
        ),
      );
      if (!o2.json && page.data.some((p) => p.simulated)) o2.info('simulated: sandbox money, nothing was sent on chain');
      if (!o2.json && page.next_cursor) o2.info(`more: --cursor ${page.next_cursor}`);
    });

  const refunds = program.command('refunds').description('refunds of your payment sessions');
  refunds
    .command('create <session_id>')
    .description('refund a session: by default to the address that paid, its excess when overpaid, else everything left')
    .option('--amount-subunits <n>', 'amount in smallest units (default: the excess of an overpaid session, else everything left)')
    .option('--destination <address>', 'where to send it (default: the address that paid the session)')
    .option('--reason <text>', 'kept on the refund, e.g. requested_by_customer')
    .option('--idempotency-key <key>', 'makes a retry safe (one is generated otherwise)')
    .action(async (id: string, o: { amountSubunits?: string; destination?: string; reason?: string; idempotencyKey?: string }) => {
      const r = await client().refunds.create(
        id,
        {
          ...(o.amountSubunits ? { amount_subunits: o.amountSubunits } : {}),
          ...(o.destination ? { destination: o.destination } : {}),
          ...(o.reason ? { reason: o.reason } : {}),
        },
        { idempotencyKey: o.idempotencyKey },
      );
      out().print(r, () => details(refundRow(r), [...REFUND_FIELDS, 'created_at']));
    });
  refunds
    .command('get <session_id> <refund_id>')
    .description('show a refund')
    .action(async (id: string, refundId: string) => {
      const r = await client().refunds.get(id, refundId);
      out().print(r, () => details(refundRow(r), [...REFUND_FIELDS, 'failure_reason', 'created_at', 'completed_at']));
    });
  refunds
    .command('list <session_id>')
    .description("a session's refunds, newest first")
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (id: string, o: { limit?: number; cursor?: string }) => {
      const page = await client().refunds.list(id, { limit: o.limit, cursor: o.cursor });
      const o2 = out();
      o2.print(page, () =>
        table(
          page.data.map((r) => ({ ...refundRow(r), simulated: r.simulated ? 'yes' : 'no' })),
          ['id', 'status', 'simulated', 'amount', 'token', 'destination', 'created_at'],
        ),
      );
      if (!o2.json && page.next_cursor) o2.info(`more: --cursor ${page.next_cursor}`);
    });

  const wallets = program.command('wallets').description('your wallets and balances');
  wallets
    .command('list')
    .description('your wallets')
    .action(async () => {
      const page = await client().wallets.list();
      out().print(page, () =>
        table(
          page.data.map((w) => ({ ...w, available: balancesText(w) })),
          ['id', 'type', 'chain', 'network', 'address', 'is_default', 'available'],
        ),
      );
    });

  program
    .command('rates')
    .description('spot rates (exact decimals)')
    .option('--base <token>', 'only this token, e.g. ETH')
    .option('--quote <fiat>', 'fiat code, default USD')
    .action(async (o: { base?: string; quote?: string }) => {
      const r = await client().rates({ base: o.base, quote: o.quote });
      out().print(r, () => table(r.data as unknown as Record<string, unknown>[], ['base', 'quote', 'rate', 'source', 'as_of', 'stale']));
    });

  program
    .command('env')
    .description('print `export` lines of the API key, webhook secret and base URL, for eval "$(payments env)"')
    .action(() => {
      // the credentials go into a shell's environment, never onto a screen or into a terminal's scrollback
      if (process.stdout.isTTY)
        throw new CliError('this prints your API key: run it as eval "$(payments env)" so that it goes to the shell, not the screen');
      const p = profile();
      if (!p.api_key) throw new CliError('no API key: run `payments register` or `payments login` first', EXIT.AUTH);
      const lines = [`export PAYMENTS_BASE_URL=${shellQuote(baseUrl())}`, `export PAYMENTS_API_KEY=${shellQuote(p.api_key)}`];
      if (p.webhook_secret) lines.push(`export PAYMENTS_WEBHOOK_SECRET=${shellQuote(p.webhook_secret)}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });

  program
    .command('config')
    .description('where the profile file is')
    .action(() => {
      out().print(
        { config: configPath(), profile: globals().profile, base_url: baseUrl(), api_key_set: Boolean(profile().api_key) },
        () =>
          `config file: ${configPath()}\nprofile: ${globals().profile}\nbase url: ${baseUrl()}\nAPI key: ${profile().api_key ? 'set' : 'not set'}`,
      );
    });

  return program;
}

/** An error for people: the message, then what fixes it and the request id to quote, when the service said. */
function errorText(e: unknown): string {
  if (!(e instanceof PaymentsError)) return `Error: ${(e as Error)?.message ?? String(e)}\n`;
  const lines = [`Error: ${e.message}`];
  for (const f of e.errors.slice(e.errors.length > 1 ? 0 : 1)) lines.push(`  ${f.field ?? '(request)'}: ${f.message}`);
  if (e.remediation) lines.push(`  fix: ${e.remediation}`);
  if (e.request_id) lines.push(`  request id: ${e.request_id}`);
  return `${lines.join('\n')}\n`;
}

/** The same for --json: the envelope's fields as the service sent them, with the HTTP status. */
function errorJson(e: unknown): Record<string, unknown> {
  if (!(e instanceof PaymentsError)) return { message: (e as Error)?.message ?? String(e) };
  return {
    message: e.message,
    ...(e.code ? { code: e.code } : {}),
    ...(e.status ? { status: e.status } : {}),
    ...(e.field ? { field: e.field } : {}),
    ...(e.remediation ? { remediation: e.remediation } : {}),
    ...(e.request_id ? { request_id: e.request_id } : {}),
    retryable: e.retryable,
    ...(e.errors.length ? { errors: e.errors } : {}),
  };
}

/** Runs the CLI and returns the exit code (never calls process.exit itself). */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version are not failures; everything else commander reports is usage
      return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    const json = process.argv.includes('--json');
    process.stderr.write(json ? `${JSON.stringify({ error: errorJson(e) })}\n` : errorText(e));
    return exitCodeOf(e);
  } finally {
    closePrompts();
  }
}
