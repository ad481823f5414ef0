/**
 * `npm run repl`: Moleculer's REPL on an operator node, with the operator commands added
 * (trust-email, trust-domain, invite, create-user, set-kyc, set-rate-limit, …; `help` lists them).
 */
import { OPERATOR_COMMANDS, commandSynopsis, runCommand, startOperatorNode } from './operator-commands.ts';

const node = await startOperatorNode();
const customCommands = OPERATOR_COMMANDS.map((cmd) => ({
  command: commandSynopsis(cmd),
  description: cmd.description,
  async action(broker: typeof node.broker, params: Record<string, string>) {
    const values = [...cmd.args, ...(cmd.optional ?? [])].map((a) => params[a]);
    try {
      console.log(JSON.stringify(await runCommand(broker, cmd, values), null, 2));
    } catch (e) {
      console.error(`error: ${(e as Error).message}`);
    }
  },
}));
node.broker.options.replOptions = { customCommands, delimiter: 'payments $' } as never;
node.broker.repl();
