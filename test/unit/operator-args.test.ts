/**
 * How the operator script and the REPL read a command's values (scripts/operator-commands.ts): valued
 * flags (`--reason "…"`, `--reason=…`) anywhere after the name, the rest by position, and what
 * `reconcile` and `reconcile:ack` pass to their actions.
 */
import { OPERATOR_COMMANDS, commandArgs, commandSynopsis } from '../../scripts/operator-commands.ts';

const cmd = (name: string) => OPERATOR_COMMANDS.find((c) => c.name === name)!;
const id = `drf_${'a'.repeat(26)}`;

describe('operator command values', () => {
  it('reconcile:ack takes the drift id by position and the reason and who as flags, in any order', () => {
    const ack = cmd('reconcile:ack');
    expect(commandSynopsis(ack)).toBe('reconcile:ack <drift_id> --reason <reason> --by <by>');
    for (const values of [
      [id, '--reason', 'known: moved by hand', '--by', 'alice'],
      ['--by', 'alice', '--reason', 'known: moved by hand', id],
      [id, '--reason=known: moved by hand', '--by=alice'],
    ]) {
      const { args, positional } = commandArgs(ack, values);
      expect(positional).toEqual([id]);
      expect(ack.local ? null : ack.params(args)).toEqual({ drift_id: id, reason: 'known: moved by hand', by: 'alice' });
    }
    // without --by: the login and host of the process, in the audit trail's alphabet
    const { args } = commandArgs(ack, [id, '--reason', 'r']);
    expect((ack.local ? null : ack.params(args))?.by).toMatch(/^[A-Za-z0-9._@+-]{1,64}$/);
    // a value that is no flag of the command stays positional (the usage check counts it)
    expect(commandArgs(ack, [id, '--deep']).positional).toEqual([id, '--deep']);
  });

  it('reconcile: --deep, and --all (which implies it)', () => {
    const rec = cmd('reconcile');
    const params = (...v: string[]) => (rec.local ? null : rec.params(commandArgs(rec, v).args));
    expect(params()).toEqual({ deep: false, all: false });
    expect(params('--deep')).toEqual({ deep: true, all: false });
    expect(params('--deep', '--all')).toEqual({ deep: true, all: true });
    expect(params('--all')).toEqual({ deep: true, all: true });
  });
});
