/** `payments wallets list` (balances) and `payments rates` (spot rates, exact decimals). */
import type { Command } from 'commander';
import type { Wallet } from '../../client.ts';
import type { Cli } from '../context.ts';
import { table } from '../output.ts';

function balancesText(w: Wallet): string {
  return (w.balances ?? []).map((b) => `${(b as Record<string, unknown>).available} ${(b as Record<string, unknown>).token}`).join(', ');
}

export function walletCommands(program: Command, cli: Cli): void {
  const wallets = program.command('wallets').description('your wallets and balances');
  wallets
    .command('list')
    .description('your wallets')
    .action(async () => {
      const page = await cli.client().wallets.list();
      cli.out().print(page, () =>
        table(
          page.data.map((w) => ({ ...w, available: balancesText(w) })),
          ['id', 'type', 'chain', 'network', 'address', 'is_default', 'available'],
        ),
      );
    });
}

export function rateCommands(program: Command, cli: Cli): void {
  program
    .command('rates')
    .description('spot rates (exact decimals)')
    .option('--base <token>', 'only this token, e.g. ETH')
    .option('--quote <fiat>', 'fiat code, default USD')
    .action(async (o: { base?: string; quote?: string }) => {
      const r = await cli.client().rates({ base: o.base, quote: o.quote });
      cli
        .out()
        .print(r, () => table(r.data as unknown as Record<string, unknown>[], ['base', 'quote', 'rate', 'source', 'as_of', 'stale']));
    });
}
