/**
 * Operator tool: `npm run operator -- <command> [args]` (same environment as the service: DATA_DIR or
 * STORE_URL embedded, TRANSPORTER in a cluster). Prints the result as JSON. `npm run operator -- help`.
 */
import { OPERATOR_COMMANDS, runCommand, startOperatorNode } from './operator-commands.ts';

const [name, ...values] = process.argv.slice(2);
const cmd = OPERATOR_COMMANDS.find((c) => c.name === name);
if (!cmd || values.length < cmd.args.length) {
  console.log('usage: npm run operator -- <command> [args]\n');
  for (const c of OPERATOR_COMMANDS) {
    console.log(
      `  ${[c.name, ...c.args.map((a) => `<${a}>`), ...(c.optional ?? []).map((a) => `[${a}]`)].join(' ').padEnd(44)} ${c.description}`,
    );
  }
  process.exit(name && name !== 'help' ? 2 : 0);
}
// a local command (backup, restore) works on this machine's files and joins no broker
const node = cmd.local ? null : await startOperatorNode();
let code: number;
try {
  const result = await runCommand(node?.broker ?? null, cmd, values);
  console.log(cmd.format ? cmd.format(result) : JSON.stringify(result, null, 2));
  for (const w of cmd.warnings?.(result) ?? []) console.error(`warning: ${w}`);
  code = cmd.exitCode?.(result) ?? 0;
} catch (e) {
  console.error(`error: ${(e as Error).message}`);
  code = 1;
} finally {
  await node?.stop();
}
process.exit(code);
