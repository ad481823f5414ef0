/**
 * Events: `payments events list|get|resend`, `payments listen` (the stream, forwarded signed to a local
 * URL) and `payments trigger` (a sandbox object driven to an event).
 */
import type { Command } from 'commander';
import type { Event } from '../../client.ts';
import { moreHint, num, type Cli } from '../context.ts';
import { listen } from '../listen.ts';
import { CliError, details, table } from '../output.ts';
import { trigger, TRIGGERABLE } from '../trigger.ts';

function eventSubject(e: Event): string {
  const r = e as Record<string, unknown>;
  return String(r.refund_id ?? r.session_id ?? r.payout_id ?? '');
}

function eventsGroup(program: Command, cli: Cli): void {
  const events = program.command('events').description('your events (every webhook, whatever its delivery)');
  events
    .command('list')
    .description('events, newest first')
    .option('--type <types>', 'only these event types, comma-separated')
    .option('--created-after <time>', 'only events created after this ISO time')
    .option('--limit <n>', 'page size, 1 to 100', num)
    .option('--cursor <cursor>', 'the next page')
    .action(async (o: { type?: string; createdAfter?: string; limit?: number; cursor?: string }) => {
      const page = await cli.client().events.list({ type: o.type, created_after: o.createdAfter, limit: o.limit, cursor: o.cursor });
      const o2 = cli.out();
      o2.print(page, () =>
        table(
          page.data.map((e) => ({ ...e, subject: eventSubject(e) })),
          ['id', 'event_type', 'subject', 'status', 'created_at'],
        ),
      );
      moreHint(o2, page.next_cursor);
    });
  events
    .command('get <event_id>')
    .description('show one event')
    .action(async (id: string) => {
      const e = await cli.client().events.get(id);
      cli.out().print(e, () => details(e as Record<string, unknown>));
    });
  events
    .command('resend <event_id>')
    .description('deliver an event to your webhook_url again now')
    .action(async (id: string) => {
      const c = cli.client();
      const delivery = await c.events.resend(id).catch((e: unknown) => {
        if (e instanceof Error && /cannot be resent/.test(e.message)) throw new CliError(e.message);
        throw e;
      });
      const last = delivery.attempts[delivery.attempts.length - 1];
      cli
        .out()
        .print(delivery, () => `${id}: ${delivery.status}; last attempt ${last ? `${last.status ?? last.error} at ${last.at}` : 'none'}`);
    });
}

function listenCommand(program: Command, cli: Cli): void {
  program
    .command('listen')
    .description('stream your events and forward each, signed as in production, to a local URL')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:4242/webhooks')
    .option('--type <types>', 'only these event types, comma-separated')
    .option('--last-event-id <id>', 'replay every event after this stream position or evt_ id first')
    .action(async (o: { forwardTo: string; type?: string; lastEventId?: string }) => {
      const c = cli.client();
      const secret = cli.profile().webhook_secret;
      if (!secret)
        throw new CliError('no webhook secret to sign with: set PAYMENTS_WEBHOOK_SECRET or run `payments login --with-webhook-secret`');
      const o2 = cli.out();
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
}

function triggerCommand(program: Command, cli: Cli): void {
  program
    .command('trigger <event_type>')
    .description(`make a sandbox session (or payout) reach an event: ${TRIGGERABLE.join(', ')}`)
    .option('--amount <amount>', 'amount in token units', num, 1)
    .option('--chain <chain>', 'chain', 'ethereum')
    .option('--token <token>', 'token', 'USDC')
    .option('--destination <address>', 'payout destination (payout events)')
    .action(async (type: string, o: { amount: number; chain: string; token: string; destination?: string }) => {
      const o2 = cli.out();
      const event = await trigger(cli.client(), type, { ...o, info: (t) => o2.info(t) });
      o2.print(event, () => `${event.event_type} ${event.id}\n${details(event as Record<string, unknown>)}`);
    });
}

export function eventCommands(program: Command, cli: Cli): void {
  eventsGroup(program, cli);
  listenCommand(program, cli);
  triggerCommand(program, cli);
}
