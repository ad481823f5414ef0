/**
 * The catalog's rules as pure functions: the state table of stores, products, plans and prices, the
 * versioning rule, price validation against the rail list, the payment methods of a checkout, and the
 * opaque paging cursor. No store and no broker in here; lib/catalog/merchant.ts and buyer.ts apply them.
 *
 * State table (spec: Catalog, merchant side):
 *
 * | action  | store                         | product, plan, price                                       |
 * |---------|-------------------------------|------------------------------------------------------------|
 * | create  | draft (201)                   | draft (201), version 1                                     |
 * | PATCH   | in place, any status (200)    | draft and never checkout-referenced: in place (200);       |
 * |         |                               | otherwise a new draft version (201, new id, version + 1,   |
 * |         |                               | supersedes_*_id = the patched id; the old row untouched)   |
 * | publish | draft/archived → published;   | draft → published (200); otherwise 409. Publishing a       |
 * |         | published: 200, no change     | version archives the other published versions of its line  |
 * | archive | → archived; archived: 200     | draft/published → archived; archived: 200, no change       |
 * | DELETE  | draft, never published, no    | draft, never published, never checkout-referenced, no      |
 * |         | products: deleted; else 409   | children: deleted (200); otherwise 409 (archive instead)   |
 */
import { allowsNetwork } from '../core/environment.ts';
import { buildRails, findRail, railKey, type Rail } from '../../config/rails.ts';
import { fromSubunits, toSubunits } from '../core/money.ts';
import { FIAT_CURRENCIES, MAX_FIAT_UNITS, isFiatCurrency } from '../rates/quote.ts';

export type Kind = 'store' | 'product' | 'plan' | 'price';
export type Status = 'draft' | 'published' | 'archived';

export const VERSIONED: Record<Kind, boolean> = { store: false, product: true, plan: true, price: true };

/** The part of a stored row the state table looks at. */
export interface StateView {
  status: Status;
  checkout_referenced?: boolean;
  published_at?: string | null;
}

export type Outcome =
  { kind: 'in_place' } | { kind: 'new_version' } | { kind: 'apply' } | { kind: 'noop' } | { kind: 'conflict'; message: string };

/** PATCH: in place, or a new draft version (product, plan, price once published or checkout-referenced). */
export function patchOutcome(kind: Kind, row: StateView): Outcome {
  if (!VERSIONED[kind]) return { kind: 'in_place' };
  if (row.status === 'draft' && !row.checkout_referenced) return { kind: 'in_place' };
  return { kind: 'new_version' };
}

export function publishOutcome(kind: Kind, id: string, row: StateView): Outcome {
  if (!VERSIONED[kind]) return row.status === 'published' ? { kind: 'noop' } : { kind: 'apply' };
  if (row.status === 'draft') return { kind: 'apply' };
  return {
    kind: 'conflict',
    message: `${kind} ${id} is ${row.status}; only a draft can be published. PATCH it to make a new draft version, then publish that`,
  };
}

export function archiveOutcome(row: StateView): Outcome {
  return row.status === 'archived' ? { kind: 'noop' } : { kind: 'apply' };
}

const CHILD: Record<Kind, string | null> = { store: 'products', product: 'plans', plan: 'prices', price: null };

/** DELETE: only a draft that was never published, never checkout-referenced and has no children. */
export function deleteOutcome(kind: Kind, id: string, row: StateView, children: number): Outcome {
  if (row.status !== 'draft' || row.published_at || row.checkout_referenced) {
    const why = row.checkout_referenced ? 'is referenced by a checkout' : row.status === 'draft' ? 'was published' : `is ${row.status}`;
    return { kind: 'conflict', message: `${kind} ${id} ${why} and cannot be deleted; archive it instead (POST …/${id}/archive)` };
  }
  if (children > 0) {
    return {
      kind: 'conflict',
      message: `${kind} ${id} still has ${children} ${CHILD[kind]}; delete or archive them first, or archive this ${kind}`,
    };
  }
  return { kind: 'apply' };
}

/** What a text search compares: name and description, lowercased (Unicode, not only ASCII). */
export function searchText(name: string, description: string | null | undefined): string {
  return `${name}\n${description ?? ''}`.toLowerCase();
}

// ---------------------------------------------------------------------------------------------------
// Prices and rails

export interface PriceTerms {
  amount_subunits: string;
  currency_or_token: string;
  allowed_payment_methods?: string[] | null;
}

/** Every rail the service knows how to settle, enabled or not (both networks of every chain and token). */
export function knownRails(): Rail[] {
  const on = { testnet: { rpcUrl: 'known' }, mainnet: { rpcUrl: 'known' } };
  return buildRails({ ethereum: on, solana: on });
}

const UINT256_MAX = (1n << 256n) - 1n;

export function parseMethod(entry: string): { chain: string; network: string; token: string } | null {
  const m = /^([a-z0-9_-]+):([a-z0-9_-]+):([A-Za-z0-9]+)$/.exec(entry);
  return m ? { chain: m[1], network: m[2], token: m[3] } : null;
}

/**
 * Validates a price's terms against the rail list: the token must be the token of an enabled rail;
 * every allowed payment method must be a known rail (enabled or not) of that token; the amount must be
 * a canonical positive integer, fit on chain (uint256) and reach the minimum of every rail it may be
 * paid on; those rails must agree on the token's decimals (the meaning of amount_subunits).
 * Returns the token's decimals, or an error message.
 */
export function checkPriceTerms(
  terms: PriceTerms,
  known: Rail[],
  enabled: Rail[],
): { decimals: number } | { error: string; field: string } {
  if (isFiatCurrency(terms.currency_or_token)) return checkFiatPriceTerms(terms, known);
  const token = terms.currency_or_token;
  const tokens = [...new Set(enabled.map((r) => r.token))];
  if (!tokens.includes(token as Rail['token'])) {
    return {
      field: 'currency_or_token',
      error: `currency_or_token '${token}' is not the token of an enabled rail; use one of ${tokens.join(', ')} (see GET /v1/payment_methods), or a fiat currency: ${Object.keys(FIAT_CURRENCIES).join(', ')}`,
    };
  }
  let scope: Rail[];
  if (terms.allowed_payment_methods != null) {
    if (terms.allowed_payment_methods.length === 0)
      return {
        field: 'allowed_payment_methods',
        error: 'allowed_payment_methods must not be empty; omit it to allow every enabled rail of the token',
      };
    scope = [];
    for (const entry of terms.allowed_payment_methods) {
      const p = parseMethod(entry);
      const rail = p && findRail(known, p.chain, p.network, p.token);
      if (!rail)
        return {
          field: `allowed_payment_methods[${terms.allowed_payment_methods.indexOf(entry)}]`,
          error: `allowed_payment_methods entry '${entry}' is not a known rail; use <chain>:<network>:<token> as listed by GET /v1/payment_methods`,
        };
      if (rail.token !== token)
        return {
          field: `allowed_payment_methods[${terms.allowed_payment_methods.indexOf(entry)}]`,
          error: `allowed_payment_methods entry '${entry}' is for ${rail.token}, but currency_or_token is ${token}`,
        };
      scope.push(rail);
    }
  } else {
    scope = enabled.filter((r) => r.token === token);
  }
  const decimals = new Set(scope.map((r) => r.decimals));
  if (decimals.size > 1) {
    return {
      field: 'allowed_payment_methods',
      error: `the rails of ${token} in this price have different decimals (${[...decimals].join(', ')}); restrict allowed_payment_methods to rails with the same decimals`,
    };
  }
  const d = scope[0].decimals;
  const amount = terms.amount_subunits;
  if (!/^[1-9]\d*$/.test(amount)) {
    return {
      field: 'amount_subunits',
      error: `amount_subunits must be a positive integer in the smallest unit of ${token} (${d} decimals), digits only without leading zeros, e.g. "${10n ** BigInt(d)}" for 1 ${token}`,
    };
  }
  const units = BigInt(amount);
  if (units > UINT256_MAX) return { field: 'amount_subunits', error: 'amount_subunits is too large' };
  for (const r of scope) {
    const min = toSubunits(r.min_amount, r.decimals);
    if (units < min) {
      return {
        field: 'amount_subunits',
        error: `amount_subunits ${amount} (${fromSubunits(units, d)} ${token}) is below the minimum of ${railKey(r)}: ${min} (${r.min_amount} ${token})`,
      };
    }
  }
  return { decimals: d };
}

/**
 * A price in fiat (USD, EUR, …): amount_subunits in the currency's minor units (cents), paid in any token
 * at a rate read when the session is created (lib/rates/quote.ts). Every allowed payment method must be a
 * known rail, of any token; the rails' min_amount is checked on the converted amount then, not here.
 */
function checkFiatPriceTerms(terms: PriceTerms, known: Rail[]): { decimals: number } | { error: string; field: string } {
  const currency = terms.currency_or_token;
  const digits = FIAT_CURRENCIES[currency];
  for (const [i, entry] of (terms.allowed_payment_methods ?? []).entries()) {
    const p = parseMethod(entry);
    if (!p || !findRail(known, p.chain, p.network, p.token))
      return {
        field: `allowed_payment_methods[${i}]`,
        error: `allowed_payment_methods entry '${entry}' is not a known rail; use <chain>:<network>:<token> as listed by GET /v1/payment_methods`,
      };
  }
  if (terms.allowed_payment_methods?.length === 0)
    return { field: 'allowed_payment_methods', error: 'allowed_payment_methods must not be empty; omit it to allow every enabled rail' };
  if (!/^[1-9]\d*$/.test(terms.amount_subunits) || BigInt(terms.amount_subunits) > MAX_FIAT_UNITS * 10n ** BigInt(digits)) {
    return {
      field: 'amount_subunits',
      error: `amount_subunits must be a positive integer in the minor unit of ${currency} (${digits} decimals), digits only without leading zeros, e.g. "${10n ** BigInt(digits) * 25n}" for 25 ${currency}; at most ${MAX_FIAT_UNITS} ${currency}`,
    };
  }
  return { decimals: digits };
}

/**
 * The payment methods of a checkout: the price's list (or every rail of its token when it has none;
 * every rail for a price in fiat), only enabled rails, and testnet only for a sandbox merchant. In the
 * rail list's order.
 */
export function checkoutMethods(terms: PriceTerms, enabled: Rail[], sandbox: boolean): string[] {
  const wanted = terms.allowed_payment_methods != null ? new Set(terms.allowed_payment_methods) : null;
  const fiat = isFiatCurrency(terms.currency_or_token);
  return enabled
    .filter((r) => fiat || r.token === terms.currency_or_token)
    .filter((r) => allowsNetwork(sandbox, r.network))
    .map(railKey)
    .filter((k) => wanted === null || wanted.has(k));
}

/** Compares an amount of a session with a snapshot's; both digit strings. */
export function sameAmount(a: string, b: string): boolean {
  return /^\d+$/.test(a) && /^\d+$/.test(b) && BigInt(a) === BigInt(b);
}
