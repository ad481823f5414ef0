/**
 * `npm run repl`: Moleculer's REPL on an operator node that joins the running service (over TRANSPORTER
 * in a cluster, through DATA_DIR/node.sock in the one-process default), so `nodes`, `services` and
 * `call merchants.me --merchant_id mer_…` see the service itself; with the operator commands added
 * (trust-email, trust-domain, invite, create-user, set-kyc, set-rate-limit, …; `help` lists them).
 */
import { applySecretFiles } from '../config/index.ts';
import { ConfigError, exitOnConfigError } from '../config/errors.ts';
import { OPERATOR_COMMANDS, commandSynopsis, runCommand, startOperatorNode } from './operator-commands.ts';

let node: Awaited<ReturnType<typeof startOperatorNode>>;
try {
  applySecretFiles(process.env);
  node = await startOperatorNode(process.env, { joinRunningService: true });
} catch (e) {
  if (e instanceof ConfigError) exitOnConfigError(e);
  // e.g. the socket's service holds another cluster key: its services never show up
  console.error(`cannot start the REPL: ${(e as Error).message}`);
  process.exit(1);
}
console.log(
  node.joined === 'cluster'
    ? 'joined the cluster over TRANSPORTER'
    : node.joined === 'local-socket'
      ? 'joined the running service (its local socket in DATA_DIR)'
      : 'no service is running on this DATA_DIR: this REPL runs its own operator node on the same store',
);
const customCommands = OPERATOR_COMMANDS.map((cmd) => ({
  // valued flags are the REPL's options, not arguments
  command: commandSynopsis({ ...cmd, flags: [] }),
  options: (cmd.flags ?? []).map((f) => ({ option: `--${f} <${f}>`, description: f })),
  description: cmd.description,
  async action(broker: typeof node.broker, params: Record<string, string> & { options?: Record<string, unknown> }) {
    const values = [...cmd.args, ...(cmd.optional ?? [])].map((a) => params[a]!);
    // valued flags (`--reason "…"`) reach the REPL as options
    for (const f of cmd.flags ?? []) if (params.options?.[f] !== undefined) values.push(`--${f}`, String(params.options[f]));
    try {
      console.log(JSON.stringify(await runCommand(broker, cmd, values), null, 2));
    } catch (e) {
      console.error(`error: ${(e as Error).message}`);
    }
  },
}));
node.broker.options.replOptions = { customCommands, delimiter: 'payments $' } as never;
node.broker.repl();
