/** The ledger: TigerBeetle-style double entry over the store port (see README "Balances, settlement, payouts"). */
export * from './accounts.ts';
export * from './transfers.ts';
export * from './wallet-tx-ids.ts';
export * from './wallet-history.ts';
export * from './commit.ts';
export * from './balances.ts';
export * from './movements.ts';
export * from './check.ts';
