/**
 * Credentials: `register` (a sandbox merchant: emailed code, proof of work), `login` (a key read from
 * stdin), `env` (export lines for a shell) and `config` (where the profile file is). Keys go to the
 * profile file (mode 0600) and into a shell's environment, never onto the screen.
 */
import type { Command } from 'commander';
import { PaymentsClient } from '../../client.ts';
import { register } from '../../node.ts';
import type { PowProgress } from '../../pow.ts';
import type { Cli } from '../context.ts';
import { configPath, saveProfile } from '../profile.ts';
import { CliError, EXIT, details, type Out } from '../output.ts';
import { ask, closePrompts } from '../prompt.ts';

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

function loginCommand(program: Command, cli: Cli): void {
  program
    .command('login')
    .description('store an API key (read from stdin, not echoed) in the profile file, mode 0600')
    .option('--with-webhook-secret', 'also ask for the webhook secret that `listen` signs with')
    .action(async (o: { withWebhookSecret?: boolean }) => {
      const apiKey = await ask('API key: ', { secret: true });
      const webhookSecret = o.withWebhookSecret ? await ask('Webhook secret: ', { secret: true }) : undefined;
      closePrompts();
      const me = await new PaymentsClient({ baseUrl: cli.baseUrl(), apiKey }).me();
      const path = saveProfile(cli.globals().profile, {
        base_url: cli.baseUrl(),
        api_key: apiKey,
        merchant_id: me.id,
        ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
      });
      cli
        .out()
        .print(
          { merchant_id: me.id, name: me.name, profile: cli.globals().profile, config: path },
          () => `Logged in as ${me.name} (${me.id}); credentials saved to ${path} (mode 0600)`,
        );
      nextSteps(cli.out());
    });
}

function registerCommand(program: Command, cli: Cli): void {
  program
    .command('register')
    .description('register a sandbox merchant: email code (asked on stdin), proof of work, credentials saved to the profile')
    .requiredOption('--email <email>', 'your email address (a code is sent to it)')
    .requiredOption('--name <name>', "the merchant's display name")
    .option('--webhook-url <url>', 'where webhooks are POSTed')
    .option('--invitation-token <token>', 'an invitation from an operator')
    .action(async (o: { email: string; name: string; webhookUrl?: string; invitationToken?: string }) => {
      const o2 = cli.out();
      const merchant = await register({
        baseUrl: cli.baseUrl(),
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
      const path = saveProfile(cli.globals().profile, {
        base_url: cli.baseUrl(),
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
}

function envCommand(program: Command, cli: Cli): void {
  program
    .command('env')
    .description('print `export` lines of the API key, webhook secret and base URL, for eval "$(payments env)"')
    .action(() => {
      // the credentials go into a shell's environment, never onto a screen or into a terminal's scrollback
      if (process.stdout.isTTY)
        throw new CliError('this prints your API key: run it as eval "$(payments env)" so that it goes to the shell, not the screen');
      const p = cli.profile();
      if (!p.api_key) throw new CliError('no API key: run `payments register` or `payments login` first', EXIT.AUTH);
      const lines = [`export PAYMENTS_BASE_URL=${shellQuote(cli.baseUrl())}`, `export PAYMENTS_API_KEY=${shellQuote(p.api_key)}`];
      if (p.webhook_secret) lines.push(`export PAYMENTS_WEBHOOK_SECRET=${shellQuote(p.webhook_secret)}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}

function configCommand(program: Command, cli: Cli): void {
  program
    .command('config')
    .description('where the profile file is')
    .action(() => {
      const { profile } = cli.globals();
      const keySet = Boolean(cli.profile().api_key);
      cli
        .out()
        .print(
          { config: configPath(), profile, base_url: cli.baseUrl(), api_key_set: keySet },
          () => `config file: ${configPath()}\nprofile: ${profile}\nbase url: ${cli.baseUrl()}\nAPI key: ${keySet ? 'set' : 'not set'}`,
        );
    });
}

/** login and register: credentials in. */
export function accountCommands(program: Command, cli: Cli): void {
  loginCommand(program, cli);
  registerCommand(program, cli);
}

/** env and config: where the credentials are (last in --help, after the API's commands). */
export function profileCommands(program: Command, cli: Cli): void {
  envCommand(program, cli);
  configCommand(program, cli);
}
