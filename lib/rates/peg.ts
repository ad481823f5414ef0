/**
 * The pegs of the stablecoins the service carries: USDC is redeemable 1:1 for US dollars by its issuer, so
 * USDC/USD = 1 is a fact, not an invented price. The `peg` rate source (last in the default order) answers
 * these pairs when no market source is configured; a configured Chainlink or HTTP source comes first and
 * shows a depeg. Nothing else has a peg.
 */
export const PEGS: Readonly<Record<string, string>> = { 'USDC:USD': '1' };
