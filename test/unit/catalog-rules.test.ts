/** The catalog's pure rules: the state table, price validation against rails, checkout methods, cursors. */
import fc from 'fast-check';
import { buildRails, railKey, type Rail } from '../../config/rails.ts';
import { newId } from '../../lib/core/ids.ts';
import {
  archiveOutcome,
  checkoutMethods,
  checkPriceTerms,
  deleteOutcome,
  knownRails,
  patchOutcome,
  publishOutcome,
  sameAmount,
  searchText,
  type Kind,
  type Status,
} from '../../lib/catalog/rules.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../../lib/core/paging.ts';

const KINDS: Kind[] = ['store', 'product', 'plan', 'price'];
const STATUSES: Status[] = ['draft', 'published', 'archived'];
const testnetOnly = buildRails({
  ethereum: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: '' } },
  solana: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: '' } },
});
const withEthMainnet = buildRails({
  ethereum: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: 'x' } },
  solana: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: '' } },
});
const known = knownRails();

describe('catalog state table', () => {
  it('PATCH: stores in place always; product, plan, price in place only as an unreferenced draft', () => {
    for (const kind of KINDS) {
      for (const status of STATUSES) {
        for (const checkout_referenced of [false, true]) {
          const got = patchOutcome(kind, { status, checkout_referenced }).kind;
          const want = kind === 'store' || (status === 'draft' && !checkout_referenced) ? 'in_place' : 'new_version';
          expect([kind, status, checkout_referenced, got]).toEqual([kind, status, checkout_referenced, want]);
        }
      }
    }
  });

  it('publish: product, plan, price only from draft (else a conflict); a store from anything, published being a no-op', () => {
    for (const kind of KINDS) {
      for (const status of STATUSES) {
        const got = publishOutcome(kind, 'x_1', { status });
        if (kind === 'store') expect(got.kind).toBe(status === 'published' ? 'noop' : 'apply');
        else if (status === 'draft') expect(got.kind).toBe('apply');
        else {
          expect(got.kind).toBe('conflict');
          expect(got.kind === 'conflict' && got.message).toMatch(new RegExp(`${kind} x_1 is ${status}; only a draft can be published`));
        }
      }
    }
  });

  it('archive: from draft or published; archived is a no-op', () => {
    expect(STATUSES.map((status) => archiveOutcome({ status }).kind)).toEqual(['apply', 'apply', 'noop']);
  });

  it('DELETE: only a never-published, unreferenced draft without children; the refusal says to archive', () => {
    for (const kind of KINDS) {
      expect(deleteOutcome(kind, 'x_1', { status: 'draft', published_at: null }, 0).kind).toBe('apply');
      for (const row of [
        { status: 'published' as const, published_at: 't' },
        { status: 'archived' as const, published_at: 't' },
        { status: 'archived' as const, published_at: null },
        { status: 'draft' as const, published_at: 't' },
        { status: 'draft' as const, published_at: null, checkout_referenced: true },
      ]) {
        const got = deleteOutcome(kind, 'x_1', row, 0);
        expect(got.kind).toBe('conflict');
        expect(got.kind === 'conflict' && got.message).toMatch(/archive it instead/);
      }
      if (kind !== 'price') {
        const got = deleteOutcome(kind, 'x_1', { status: 'draft', published_at: null }, 2);
        expect(got.kind === 'conflict' && got.message).toMatch(/still has 2/);
      }
    }
  });
});

describe('price terms against the rail list', () => {
  const ok = (terms: Parameters<typeof checkPriceTerms>[0], enabled = testnetOnly) => checkPriceTerms(terms, known, enabled);

  it('returns the decimals of the token on its rails', () => {
    expect(ok({ amount_subunits: '2500000', currency_or_token: 'USDC' })).toEqual({ decimals: 6 });
    expect(ok({ amount_subunits: '1000000000000000000', currency_or_token: 'ETH' })).toEqual({ decimals: 18 });
    expect(ok({ amount_subunits: '100000', currency_or_token: 'SOL', allowed_payment_methods: ['solana:testnet:SOL'] })).toEqual({
      decimals: 9,
    });
    // a known rail that is not enabled may be listed (the checkout intersects with enabled rails)
    expect(ok({ amount_subunits: '2500000', currency_or_token: 'USDC', allowed_payment_methods: ['solana:mainnet:USDC'] })).toEqual({
      decimals: 6,
    });
  });

  it('refuses what cannot be paid, with a message naming the fix', () => {
    const cases: Array<[Parameters<typeof checkPriceTerms>[0], RegExp]> = [
      [{ amount_subunits: '1', currency_or_token: 'BTC' }, /'BTC' is not the token of an enabled rail; use one of USDC, ETH, SOL/],
      [{ amount_subunits: '1', currency_or_token: 'usdc' }, /not the token of an enabled rail/],
      [{ amount_subunits: '0', currency_or_token: 'USDC' }, /positive integer .*\(6 decimals\).*"1000000" for 1 USDC/],
      [{ amount_subunits: '007', currency_or_token: 'USDC' }, /without leading zeros/],
      [{ amount_subunits: '1.5', currency_or_token: 'USDC' }, /digits only/],
      [
        { amount_subunits: '9999', currency_or_token: 'USDC' },
        /9999 \(0\.009999 USDC\) is below the minimum of ethereum:testnet:USDC: 10000 \(0\.01 USDC\)/,
      ],
      [{ amount_subunits: String(2n ** 256n), currency_or_token: 'USDC' }, /too large/],
      [{ amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: [] }, /must not be empty/],
      [
        { amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['tron:mainnet:USDC'] },
        /'tron:mainnet:USDC' is not a known rail/,
      ],
      [{ amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['ethereum:devnet:USDC'] }, /not a known rail/],
      [{ amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['USDC'] }, /not a known rail/],
      [
        { amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['ethereum:testnet:ETH'] },
        /is for ETH, but currency_or_token is USDC/,
      ],
    ];
    for (const [terms, message] of cases) {
      const got = ok(terms);
      expect([terms, 'error' in got && got.error]).toEqual([terms, expect.stringMatching(message)]);
    }
  });

  it('takes a price in fiat: minor units of the currency, payable on known rails of any token', () => {
    expect(ok({ amount_subunits: '2500', currency_or_token: 'USD' })).toEqual({ decimals: 2 });
    expect(ok({ amount_subunits: '1500', currency_or_token: 'JPY' })).toEqual({ decimals: 0 });
    // any token, and no min_amount here: it is checked on the converted amount when a session is created
    expect(
      ok({ amount_subunits: '1', currency_or_token: 'EUR', allowed_payment_methods: ['ethereum:testnet:ETH', 'solana:mainnet:USDC'] }),
    ).toEqual({ decimals: 2 });
    const cases: Array<[Parameters<typeof checkPriceTerms>[0], RegExp]> = [
      [{ amount_subunits: '0', currency_or_token: 'USD' }, /minor unit of USD \(2 decimals\).*"2500" for 25 USD/],
      [{ amount_subunits: '25.00', currency_or_token: 'USD' }, /digits only/],
      [{ amount_subunits: '100000000000001', currency_or_token: 'USD' }, /at most 1000000000000 USD/],
      [{ amount_subunits: '2500', currency_or_token: 'USD', allowed_payment_methods: ['tron:mainnet:USDT'] }, /not a known rail/],
      [{ amount_subunits: '2500', currency_or_token: 'USD', allowed_payment_methods: [] }, /must not be empty/],
      [{ amount_subunits: '2500', currency_or_token: 'usd' }, /not the token of an enabled rail; .*or a fiat currency: USD, EUR/],
    ];
    for (const [terms, message] of cases) {
      const got = ok(terms);
      expect([terms, 'error' in got && got.error]).toEqual([terms, expect.stringMatching(message)]);
    }
  });

  it('refuses a token whose rails disagree on decimals unless the methods pick rails that agree', () => {
    const odd: Rail[] = [
      ...testnetOnly,
      {
        chain: 'bsc' as Rail['chain'],
        network: 'testnet',
        token: 'USDC',
        display_name: 'USDC on BSC',
        decimals: 18,
        kind: 'bep20',
        min_amount: '0.01',
      },
    ];
    const got = checkPriceTerms({ amount_subunits: '2500000', currency_or_token: 'USDC' }, [...known, odd[odd.length - 1]], odd);
    expect('error' in got && got.error).toMatch(/different decimals \(6, 18\)/);
    expect(
      checkPriceTerms(
        { amount_subunits: '2500000', currency_or_token: 'USDC', allowed_payment_methods: ['solana:testnet:USDC'] },
        [...known, odd[odd.length - 1]],
        odd,
      ),
    ).toEqual({ decimals: 6 });
  });
});

describe('checkout payment methods', () => {
  it("price list (or every rail of the token) ∩ enabled ∩ the merchant's network (sandbox testnet, live mainnet), in rail-list order", () => {
    expect(checkoutMethods({ amount_subunits: '1', currency_or_token: 'USDC' }, withEthMainnet, false)).toEqual(['ethereum:mainnet:USDC']);
    expect(checkoutMethods({ amount_subunits: '1', currency_or_token: 'USDC' }, withEthMainnet, true)).toEqual([
      'ethereum:testnet:USDC',
      'solana:testnet:USDC',
    ]);
    expect(
      checkoutMethods(
        { amount_subunits: '1', currency_or_token: 'USDC', allowed_payment_methods: ['ethereum:mainnet:USDC'] },
        withEthMainnet,
        true,
      ),
    ).toEqual([]);
    expect(
      checkoutMethods(
        { amount_subunits: '1', currency_or_token: 'USDC', allowed_payment_methods: ['solana:mainnet:USDC', 'solana:testnet:USDC'] },
        withEthMainnet,
        false,
      ),
    ).toEqual([]);
    expect(
      checkoutMethods(
        { amount_subunits: '1', currency_or_token: 'USDC', allowed_payment_methods: ['ethereum:testnet:USDC'] },
        withEthMainnet,
        false,
      ),
    ).toEqual([]);
  });

  it('a price in fiat is offered on every enabled rail of the environment (or those of its list), any token', () => {
    expect(checkoutMethods({ amount_subunits: '2500', currency_or_token: 'USD' }, withEthMainnet, true)).toEqual(testnetOnly.map(railKey));
    expect(checkoutMethods({ amount_subunits: '2500', currency_or_token: 'USD' }, withEthMainnet, false)).toEqual([
      'ethereum:mainnet:USDC',
      'ethereum:mainnet:ETH',
    ]);
    expect(
      checkoutMethods(
        { amount_subunits: '2500', currency_or_token: 'EUR', allowed_payment_methods: ['solana:testnet:SOL', 'ethereum:mainnet:ETH'] },
        withEthMainnet,
        true,
      ),
    ).toEqual(['solana:testnet:SOL']);
  });

  it('property: the result is always enabled rails of the token, within the list, testnet-only for sandbox and mainnet-only for live', () => {
    const keys = known.map(railKey);
    fc.assert(
      fc.property(
        fc.constantFrom('USDC', 'ETH', 'SOL'),
        fc.option(fc.subarray(keys, { minLength: 1 }), { nil: null }),
        fc.boolean(),
        fc.constantFrom(testnetOnly, withEthMainnet),
        (token, list, sandbox, enabled) => {
          const got = checkoutMethods({ amount_subunits: '1', currency_or_token: token, allowed_payment_methods: list }, enabled, sandbox);
          const enabledKeys = enabled.map(railKey);
          for (const k of got) {
            expect(enabledKeys).toContain(k);
            expect(k.endsWith(`:${token}`)).toBe(true);
            if (list) expect(list).toContain(k);
            expect(k.split(':')[1]).toBe(sandbox ? 'testnet' : 'mainnet');
          }
          expect(new Set(got).size).toBe(got.length);
        },
      ),
    );
  });
});

describe('paging and search helpers', () => {
  it('cursors round-trip real ids and refuse anything else', () => {
    fc.assert(
      fc.property(fc.constantFrom('store', 'prod', 'plan', 'price'), fc.integer({ min: 0, max: 2 ** 40 }), (prefix, ms) => {
        const id = newId(prefix, ms);
        expect(decodeCursor(encodeCursor(id))).toBe(id);
      }),
    );
    for (const bad of [
      '',
      'abc',
      '////',
      Buffer.from('c1:DROP TABLE').toString('base64url'),
      Buffer.from('c2:prod_01m80cr1t33t1q2czpnpkpmabg').toString('base64url'),
      'x'.repeat(300),
    ]) {
      expect(decodeCursor(bad)).toBeNull();
    }
  });

  it('limit: default 20, 1 to 100', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('100')).toBe(100);
    for (const bad of ['0', '101', '-1', '1.5', 'ten', '', '99999']) expect(parseLimit(bad)).toMatch(/from 1 to 100/);
  });

  it('search text is name and description, lowercased beyond ASCII', () => {
    expect(searchText('CAFÉ Straße', 'ÄPFEL')).toBe('café straße\näpfel');
    expect(searchText('Name', null)).toBe('name\n');
  });

  it('amounts compare as integers', () => {
    expect(sameAmount('2500000', '0002500000')).toBe(true);
    expect(sameAmount('2500000', '2500001')).toBe(false);
    expect(sameAmount('2.5', '2.5')).toBe(false);
  });
});
