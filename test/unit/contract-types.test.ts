/**
 * validate() answers with the contract's own type: the body type is generated from the schema it is checked
 * against (lib/http/contract.ts), so code reading a field the contract lacks does not type-check
 * (`npx tsc` runs over the tests; each @ts-expect-error below fails the build if the line stops erring).
 */
import { validate } from '../../lib/http/validation.ts';
import type { PayoutBody } from '../../lib/payouts/accept.ts';
import type { Checked } from '../../lib/http/contract.ts';

describe('request types from the contract', () => {
  it('types a checked body by its schema and refuses what the schema refuses', () => {
    const body = validate('CreatePayoutRequest', { wallet_id: 'wal_1', amount_subunits: '1', token: 'USDC', destination: '0xabc' });
    const typed: PayoutBody = body;
    expect(typed.wallet_id).toBe('wal_1');
    // @ts-expect-error not a field of CreatePayoutRequest
    expect(body.memo).toBeUndefined();
    // @ts-expect-error not a schema of openapi.json
    expect(() => validate('NoSuchSchema', {})).toThrow(/not in openapi.json/);
    expect(() => validate('CreatePayoutRequest', { ...typed, memo: 'x' })).toThrow(/unknown field 'memo'/);
  });

  it('keeps enums as the contract states them', () => {
    const network: Checked<'CreateWalletRequest'>['network'] = 'testnet';
    // @ts-expect-error the contract knows testnet and mainnet only
    const wrong: Checked<'CreateWalletRequest'>['network'] = 'devnet';
    expect([network, wrong]).toEqual(['testnet', 'devnet']);
  });
});
