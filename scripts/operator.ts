/**
 * Operator tool: `npm run operator -- <command> [args]` (same environment as the service: DATA_DIR or
 * STORE_URL embedded, TRANSPORTER in a cluster). Prints the result as JSON. `npm run operator -- help`.
 * A usage error prints what went wrong and the usage, once, and exits 2; a bad setting is one line and 78.
 */
import { applySecretFiles } from '../config/index.ts';
import { ConfigError, exitOnConfigError } from '../config/errors.ts';
import { OPERATOR_COMMANDS, commandArgs, commandSynopsis, runCommand, startOperatorNode } from './operator-commands.ts';

function usage(): string {
  return [
    'usage: npm run operator -- <command> [args]',
    '',
    ...OPERATOR_COMMANDS.map((c) => `  ${commandSynopsis(c).padEnd(44)} ${c.description}`),
  ].join('\n');
}

function usageError(problem: string): never {
  process.stderr.write(`error: ${problem}\n\n${usage()}\n`);
  process.exit(2);
}

const [name, ...values] = process.argv.slice(2);
if (name === 'help' || name === '--help' || name === '-h') {
  console.log(usage());
  process.exit(0);
}
if (!name) usageError('no command given');
const cmd = OPERATOR_COMMANDS.find((c) => c.name === name);
if (!cmd) usageError(`unknown command "${name}"`);
const { positional } = commandArgs(cmd, values);
if (positional.length < cmd.args.length || positional.length > cmd.args.length + (cmd.optional?.length ?? 0))
  usageError(`${cmd.name} takes ${commandSynopsis(cmd).slice(cmd.name.length + 1) || 'no arguments'}`);

let node: Awaited<ReturnType<typeof startOperatorNode>> | null = null;
try {
  applySecretFiles(process.env);
  // a local command (backup, restore) works on this machine's files and joins no broker
  node = cmd.local ? null : await startOperatorNode();
} catch (e) {
  exitOnConfigError(e);
}
let code: number;
try {
  const result = await runCommand(node?.broker ?? null, cmd, values);
  console.log(cmd.format ? cmd.format(result) : JSON.stringify(result, null, 2));
  for (const w of cmd.warnings?.(result) ?? []) console.error(`warning: ${w}`);
  code = cmd.exitCode?.(result) ?? 0;
} catch (e) {
  await node?.stop();
  if (e instanceof ConfigError) exitOnConfigError(e);
  console.error(`error: ${(e as Error).message}`);
  process.exit(1);
}
await node?.stop();
process.exit(code);
