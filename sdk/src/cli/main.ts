/**
 * The `payments` CLI (commander). Every command has --help; --json prints machine-readable output on
 * stdout (people get tables; status lines go to stderr); exit codes are in output.ts (EXIT). The API key
 * comes from PAYMENTS_API_KEY or the profile file that `payments login` / `payments register` write
 * (mode 0600); it is never printed. The commands live in commands/, one module per group.
 */
import { Command, CommanderError } from 'commander';
import { PaymentsError } from '../errors.ts';
import { DEFAULT_BASE_URL } from './profile.ts';
import { EXIT, exitCodeOf } from './output.ts';
import { closePrompts } from './prompt.ts';
import { cliContext } from './context.ts';
import { accountCommands, profileCommands } from './commands/account.ts';
import { sessionCommands } from './commands/sessions.ts';
import { eventCommands } from './commands/events.ts';
import { payoutCommands, refundCommands } from './commands/payouts.ts';
import { rateCommands, walletCommands } from './commands/wallets.ts';

const EXIT_HELP = `
Exit codes: 0 ok, 1 unexpected error, 2 usage, 3 bad request (code 3), 4 missing or refused credentials (code 7),
5 not found (code 2), 6 conflict (code 5), 7 rate limited (code 4), 8 service unavailable or unreachable.
Credentials: PAYMENTS_API_KEY, or the profile file (${'$'}PAYMENTS_CONFIG, default ~/.config/payments/config.json) that
\`payments login\` or \`payments register\` writes with mode 0600. PAYMENTS_BASE_URL and PAYMENTS_WEBHOOK_SECRET override it too.`;

export function buildProgram(): Command {
  const program = new Command('payments')
    .description('Command-line client of the stablecoin payment service')
    .option('--json', 'machine-readable output on stdout')
    .option('--profile <name>', 'profile of the config file to use', 'default')
    .option('--base-url <url>', `the service (default: the profile's, PAYMENTS_BASE_URL or ${DEFAULT_BASE_URL})`)
    .addHelpText('after', EXIT_HELP)
    .showHelpAfterError()
    .exitOverride();
  const cli = cliContext(program);
  // in this order in --help
  accountCommands(program, cli);
  sessionCommands(program, cli);
  eventCommands(program, cli);
  payoutCommands(program, cli);
  refundCommands(program, cli);
  walletCommands(program, cli);
  rateCommands(program, cli);
  profileCommands(program, cli);
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
