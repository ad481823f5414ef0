/**
 * The merchant side of the catalog: stores, products, plans and prices of the calling merchant, with
 * the state table of rules.ts, idempotent creation, versioning and the discovery listings kept in step.
 * Every state change is one atomic store write; a lost compare-and-set race re-reads and decides again.
 */
import type { Runtime } from '../runtime/index.ts';
import { REMEDIATION, badRequest, conflict, forbidden, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { Idempotency, idempotencyKey as checkIdempotencyKey } from '../core/idempotency.ts';
import { isId } from '../core/ids.ts';
import { validate } from '../http/validation.ts';
import type { Checked, SchemaName } from '../http/contract.ts';
import type { Doc, Filter, WriteOp } from '../store/port.ts';
import type { Rail } from '../../config/rails.ts';
import {
  archiveOutcome,
  checkPriceTerms,
  deleteOutcome,
  knownRails,
  patchOutcome,
  publishOutcome,
  searchText,
  VERSIONED,
  type Kind,
} from './rules.ts';
import {
  COLL,
  ID_PREFIX,
  LISTINGS,
  PATH,
  present,
  type AnyRow,
  type ListingRow,
  type PlanRow,
  type PriceRow,
  type ProductRow,
  type StoreRow,
} from './model.ts';
import { retrying } from './tx.ts';
import { limitOf, pageById } from '../core/paging.ts';

/** The merchant a request acts for. */
export interface Actor {
  merchant_id: string;
  sandbox: boolean;
}

export type CallerLike =
  { kind: 'merchant'; merchant_id: string; sandbox: boolean } | { kind: 'bearer'; user_id: string } | null | undefined;

export interface Result {
  body: unknown;
  /** 201 with this Location */
  created?: string;
}

/** The schemas of openapi.json each kind's requests are checked against (and typed by). */
const SCHEMAS = {
  store: { list: 'CatalogStoreListQuery', update: 'CatalogStoreUpdate' },
  product: { list: 'CatalogProductListQuery', update: 'CatalogProductUpdate' },
  plan: { list: 'CatalogPlanListQuery', update: 'CatalogPlanUpdate' },
  price: { list: 'CatalogPriceListQuery', update: 'CatalogPriceUpdate' },
} as const satisfies Record<Kind, { list: SchemaName; update: SchemaName }>;
const ENTITLEMENT_MAX_BYTES = 4096;

type Body = Record<string, unknown>;

/** A create body with its kind, typed by the kind's schema. */
type Creation =
  | { kind: 'store'; body: Checked<'CatalogStoreCreate'> }
  | { kind: 'product'; body: Checked<'CatalogProductCreate'> }
  | { kind: 'plan'; body: Checked<'CatalogPlanCreate'> }
  | { kind: 'price'; body: Checked<'CatalogPriceCreate'> };

function checkCreation(kind: Kind, raw: unknown): Creation {
  switch (kind) {
    case 'store':
      return { kind, body: validate('CatalogStoreCreate', raw) };
    case 'product':
      return { kind, body: validate('CatalogProductCreate', raw) };
    case 'plan':
      return { kind, body: validate('CatalogPlanCreate', raw) };
    case 'price':
      return { kind, body: validate('CatalogPriceCreate', raw) };
  }
}

export class CatalogMerchant {
  private rt: Runtime;
  private idempotency: Idempotency;
  private known: Rail[];

  constructor(rt: Runtime) {
    this.rt = rt;
    this.idempotency = new Idempotency(rt.store);
    this.known = knownRails();
  }

  private get store() {
    return this.rt.store;
  }

  private now(): string {
    return this.rt.now().toISOString();
  }

  /** publish and archive take no body; an empty object is fine */
  noBody(body: unknown): void {
    validate('CatalogEmptyBody', body ?? {});
  }

  // -------------------------------------------------------------------------------------------------
  // who is calling

  /**
   * X-API-Key: its merchant. Bearer: the merchant the user owns (merchants.owner_user_id); with several,
   * the X-Merchant-Id header names one. A header that names another merchant is refused.
   */
  async actor(caller: CallerLike, merchantHeader: string | undefined): Promise<Actor> {
    if (caller?.kind === 'merchant') {
      if (merchantHeader !== undefined && merchantHeader !== caller.merchant_id) {
        throw forbidden('X-Merchant-Id does not name the merchant of this API key; omit it or send the matching id', {
          field: 'X-Merchant-Id',
          remediation: "Omit X-Merchant-Id with an API key, or send the id of the key's own merchant.",
        });
      }
      return { merchant_id: caller.merchant_id, sandbox: caller.sandbox };
    }
    if (caller?.kind !== 'bearer') throw forbidden(undefined, { remediation: REMEDIATION.apiKeyOrBearer });
    if (merchantHeader !== undefined && !isId(merchantHeader, 'mer'))
      throw badRequest('X-Merchant-Id must be a merchant id (mer_…)', {
        field: 'X-Merchant-Id',
        remediation: 'Send X-Merchant-Id as the id of one of your merchants (mer_…), or leave it out.',
      });
    const owned = await this.store.find<Doc & { sandbox: boolean }>('merchants', { owner_user_id: caller.user_id }, { limit: 1000 });
    if (merchantHeader !== undefined) {
      const m = owned.find((o) => o.id === merchantHeader);
      if (!m)
        throw forbidden('X-Merchant-Id names a merchant this user does not own', {
          field: 'X-Merchant-Id',
          remediation: 'Send X-Merchant-Id as the id of a merchant this bearer token registered.',
        });
      return { merchant_id: m.id, sandbox: !!m.sandbox };
    }
    if (owned.length === 0)
      throw forbidden('this user owns no merchant; register one with POST /v1/merchants and this bearer token first', {
        remediation: 'Register a merchant with POST /v1/merchants and this bearer token first.',
      });
    if (owned.length > 1)
      throw badRequest('this user owns several merchants; name the one to act for in the X-Merchant-Id header', {
        field: 'X-Merchant-Id',
        remediation: 'Add the X-Merchant-Id header naming the merchant (mer_…) to act for.',
      });
    return { merchant_id: owned[0].id, sandbox: !!owned[0].sandbox };
  }

  // -------------------------------------------------------------------------------------------------
  // reads

  /** A row of the actor's; another merchant's id is a 404 like an unknown one. */
  private async own<T extends AnyRow>(kind: Kind, actor: Actor, id: unknown): Promise<T> {
    const row = typeof id === 'string' && id.length <= 64 ? await this.store.get<T>(COLL[kind], id) : null;
    if (!row || row.merchant_id !== actor.merchant_id) throw notFound(`${kind} ${String(id).slice(0, 64)}`);
    return row;
  }

  async get(kind: Kind, actor: Actor, id: string): Promise<Result> {
    return { body: present(kind, await this.own(kind, actor, id)) };
  }

  async list(kind: Kind, actor: Actor, rawQuery: unknown): Promise<Result> {
    const query = validate(SCHEMAS[kind].list, rawQuery ?? {}, 'query');
    limitOf(query); // a bad limit answers before a parent lookup does
    const filter: Filter = { merchant_id: actor.merchant_id };
    if (query.status) filter.status = query.status;
    if ('store_id' in query && query.store_id) filter.store_id = (await this.own<StoreRow>('store', actor, query.store_id)).id;
    if ('product_id' in query && query.product_id)
      filter.product_lineage_id = (await this.own<ProductRow>('product', actor, query.product_id)).lineage_id;
    if ('plan_id' in query && query.plan_id) filter.plan_lineage_id = (await this.own<PlanRow>('plan', actor, query.plan_id)).lineage_id;
    return { body: await pageById<AnyRow, unknown>(this.store, COLL[kind], filter, query, (r) => present(kind, r)) };
  }

  // -------------------------------------------------------------------------------------------------
  // create

  async create(kind: Kind, actor: Actor, rawBody: unknown, idempotencyKey: string | undefined): Promise<Result> {
    const creation = checkCreation(kind, rawBody ?? {});
    const body = creation.body;
    checkIdempotencyKey(idempotencyKey);
    const make = async (extra: (response: unknown) => WriteOp[]) =>
      retrying(async () => {
        const { row, ops } = await this.newRow(creation, actor);
        const response = present(kind, row);
        ops.push(...extra(response));
        await this.store.write(ops);
        return response;
      });
    let response: unknown;
    if (idempotencyKey === undefined) response = await make(() => []);
    else {
      const req = { scope: `catalog.create_${kind}:${actor.merchant_id}`, key: idempotencyKey, payload: body, now: this.rt.now() };
      response = await this.idempotency.run(req, () => make((r) => [this.idempotency.record(req, r)]));
    }
    const id = (response as { id: string }).id;
    return { body: response, created: `${PATH[kind]}/${id}` };
  }

  /** The row a create body makes, and the write that inserts it (checks the parent). */
  private async newRow(c: Creation, actor: Actor): Promise<{ row: AnyRow; ops: WriteOp[] }> {
    const kind = c.kind;
    const at = this.now();
    const id = newId(ID_PREFIX[kind]);
    const base = {
      id,
      merchant_id: actor.merchant_id,
      sandbox: actor.sandbox,
      status: 'draft' as const,
      created_at: at,
      updated_at: at,
      published_at: null,
      archived_at: null,
    };
    const versioned = { lineage_id: id, version_no: 1, supersedes_id: null, checkout_referenced: false };
    const ops: WriteOp[] = [];
    switch (c.kind) {
      case 'store': {
        const row: StoreRow = { ...base, name: c.body.name, slug: c.body.slug ?? null, description: c.body.description ?? null };
        ops.push({ op: 'insert', coll: COLL.store, doc: row });
        return { row, ops };
      }
      case 'product': {
        const store = await this.parent<StoreRow>('store', actor, c.body.store_id, 'store_id', ops);
        const row: ProductRow = {
          ...base,
          ...versioned,
          store_id: store.id,
          name: c.body.name,
          slug: c.body.slug ?? null,
          description: c.body.description ?? null,
          fulfillment_type: c.body.fulfillment_type,
        };
        ops.push({ op: 'insert', coll: COLL.product, doc: row });
        return { row, ops };
      }
      case 'plan': {
        const product = await this.parent<ProductRow>('product', actor, c.body.product_id, 'product_id', ops);
        const row: PlanRow = {
          ...base,
          ...versioned,
          store_id: product.store_id,
          product_id: product.id,
          product_lineage_id: product.lineage_id,
          name: c.body.name,
          slug: c.body.slug ?? null,
          entitlement: this.entitlement(c.body.entitlement),
        };
        ops.push({ op: 'insert', coll: COLL.plan, doc: row });
        return { row, ops };
      }
      case 'price': {
        const plan = await this.parent<PlanRow>('plan', actor, c.body.plan_id, 'plan_id', ops);
        const terms = {
          amount_subunits: c.body.amount_subunits,
          currency_or_token: c.body.currency_or_token,
          allowed_payment_methods: c.body.allowed_payment_methods ?? null,
        };
        const row: PriceRow = {
          ...base,
          ...versioned,
          store_id: plan.store_id,
          plan_id: plan.id,
          plan_lineage_id: plan.lineage_id,
          product_lineage_id: plan.product_lineage_id,
          ...terms,
          decimals: this.decimals(terms),
        };
        ops.push({ op: 'insert', coll: COLL.price, doc: row });
        return { row, ops };
      }
    }
  }

  /**
   * The parent named in a create body: the actor's and not archived. A parent that could still be
   * deleted (a never-published draft) is touched in the same write, so that a concurrent DELETE of it
   * and this create cannot both succeed.
   */
  private async parent<T extends AnyRow>(kind: Kind, actor: Actor, id: unknown, field: string, ops: WriteOp[]): Promise<T> {
    const row = await this.own<T>(kind, actor, id);
    if (row.status === 'archived')
      throw conflict(`${field} names ${kind} ${row.id}, which is archived; use a draft or published ${kind}`, {
        field,
        remediation: `Name a draft or published ${kind} in ${field}.`,
      });
    if (row.status === 'draft') ops.push({ op: 'cas', coll: COLL[kind], doc: { ...row }, expected: row.version! });
    return row;
  }

  private entitlement(value: unknown): Record<string, unknown> | null {
    if (value === undefined || value === null) return null;
    if (Buffer.byteLength(JSON.stringify(value), 'utf8') > ENTITLEMENT_MAX_BYTES) {
      throw badRequest(`entitlement must be at most ${ENTITLEMENT_MAX_BYTES} bytes of JSON`, {
        field: 'entitlement',
        remediation: `Keep entitlement under ${ENTITLEMENT_MAX_BYTES} bytes of JSON.`,
      });
    }
    return value as Record<string, unknown>;
  }

  private decimals(terms: { amount_subunits: string; currency_or_token: string; allowed_payment_methods: string[] | null }): number {
    const checked = checkPriceTerms(terms, this.known, this.rt.config.rails);
    if ('error' in checked) throw badRequest(checked.error, { field: checked.field });
    return checked.decimals;
  }

  // -------------------------------------------------------------------------------------------------
  // PATCH

  async update(kind: Kind, actor: Actor, id: string, rawBody: unknown): Promise<Result> {
    const body = validate(SCHEMAS[kind].update, rawBody ?? {});
    return retrying(async () => {
      const row = await this.own<AnyRow>(kind, actor, id);
      const next = this.applyPatch(kind, row, body);
      const outcome = patchOutcome(kind, row);
      if (outcome.kind === 'in_place') {
        next.updated_at = this.now();
        await this.store.write([{ op: 'cas', coll: COLL[kind], doc: next, expected: row.version! }]);
        return { body: present(kind, next) };
      }
      // a new draft version; the patched row stays as it is
      const [latest] = await this.store.find<AnyRow & { version_no: number }>(
        COLL[kind],
        { lineage_id: (row as ProductRow).lineage_id },
        { sort: 'version_no', desc: true, limit: 1 },
      );
      const at = this.now();
      const version = {
        ...next,
        id: newId(ID_PREFIX[kind]),
        version: undefined,
        status: 'draft' as const,
        version_no: (latest?.version_no ?? (row as ProductRow).version_no) + 1,
        supersedes_id: row.id,
        checkout_referenced: false,
        created_at: at,
        updated_at: at,
        published_at: null,
        archived_at: null,
      } as AnyRow;
      delete (version as Partial<Doc>).version;
      await this.store.write([{ op: 'insert', coll: COLL[kind], doc: version }]);
      return { body: present(kind, version), created: `${PATH[kind]}/${version.id}` };
    }, [COLL[kind]]);
  }

  /** The row with the PATCH body applied (validated as a whole again where fields depend on each other). */
  private applyPatch(kind: Kind, row: AnyRow, body: Body): AnyRow & Body {
    const next: AnyRow & Body = { ...row };
    for (const [k, v] of Object.entries(body)) next[k] = v;
    if (kind === 'plan' && 'entitlement' in body) (next as unknown as PlanRow).entitlement = this.entitlement(body.entitlement);
    if (kind === 'price') {
      const p = next as unknown as PriceRow;
      p.decimals = this.decimals({
        amount_subunits: p.amount_subunits,
        currency_or_token: p.currency_or_token,
        allowed_payment_methods: p.allowed_payment_methods ?? null,
      });
    }
    return next;
  }

  // -------------------------------------------------------------------------------------------------
  // publish, archive, delete

  async publish(kind: Kind, actor: Actor, id: string): Promise<Result> {
    return retrying(async () => {
      const row = await this.own<AnyRow>(kind, actor, id);
      const outcome = publishOutcome(kind, row.id, row);
      if (outcome.kind === 'conflict') throw conflict(outcome.message);
      if (outcome.kind === 'noop') return { body: present(kind, row) };
      const at = this.now();
      const next = { ...row, status: 'published' as const, published_at: row.published_at ?? at, archived_at: null, updated_at: at };
      const ops: WriteOp[] = [{ op: 'cas', coll: COLL[kind], doc: next, expected: row.version! }];
      const superseded: AnyRow[] = [];
      if (VERSIONED[kind]) {
        // one published version per line: the others are archived in the same write
        const others = await this.store.find<AnyRow>(COLL[kind], { lineage_id: (row as ProductRow).lineage_id, status: 'published' });
        for (const o of others.filter((x) => x.id !== row.id)) {
          superseded.push(o);
          ops.push({
            op: 'cas',
            coll: COLL[kind],
            doc: { ...o, status: 'archived', archived_at: at, updated_at: at },
            expected: o.version!,
          });
        }
      }
      if (kind === 'product') {
        const store = await this.storeOf(next as ProductRow);
        ops.push(this.touch('store', store));
        for (const o of superseded) ops.push({ op: 'delete', coll: LISTINGS, id: o.id });
        if (store.status === 'published') ops.push({ op: 'upsert', coll: LISTINGS, doc: listingOf(next as ProductRow) });
      }
      if (kind === 'store') {
        const products = await this.store.find<ProductRow>(COLL.product, { store_id: row.id, status: 'published' });
        for (const p of products) ops.push({ op: 'upsert', coll: LISTINGS, doc: listingOf(p) });
      }
      await this.store.write(ops);
      return { body: present(kind, next) };
    });
  }

  async archive(kind: Kind, actor: Actor, id: string): Promise<Result> {
    return retrying(async () => {
      const row = await this.own<AnyRow>(kind, actor, id);
      if (archiveOutcome(row).kind === 'noop') return { body: present(kind, row) };
      const at = this.now();
      const next = { ...row, status: 'archived' as const, archived_at: at, updated_at: at };
      const ops: WriteOp[] = [{ op: 'cas', coll: COLL[kind], doc: next, expected: row.version! }];
      if (kind === 'product') {
        ops.push(this.touch('store', await this.storeOf(row as ProductRow)), { op: 'delete', coll: LISTINGS, id: row.id });
      }
      if (kind === 'store') {
        const listings = await this.store.find<ListingRow>(LISTINGS, { store_id: row.id });
        for (const l of listings) ops.push({ op: 'delete', coll: LISTINGS, id: l.id });
      }
      await this.store.write(ops);
      return { body: present(kind, next) };
    });
  }

  async remove(kind: Kind, actor: Actor, id: string): Promise<Result> {
    return retrying(async () => {
      const row = await this.own<AnyRow>(kind, actor, id);
      const children =
        kind === 'store'
          ? await this.store.count(COLL.product, { store_id: row.id })
          : kind === 'product'
            ? await this.store.count(COLL.plan, { product_id: row.id })
            : kind === 'plan'
              ? await this.store.count(COLL.price, { plan_id: row.id })
              : 0;
      const outcome = deleteOutcome(kind, row.id, row, children);
      if (outcome.kind === 'conflict') throw conflict(outcome.message);
      // the compare-and-set fails if a child was created (it touches this row) since we counted
      await this.store.write([
        { op: 'cas', coll: COLL[kind], doc: { ...row }, expected: row.version! },
        { op: 'delete', coll: COLL[kind], id: row.id },
      ]);
      return { body: { id: row.id, object: kind, deleted: true } };
    });
  }

  private async storeOf(product: ProductRow): Promise<StoreRow> {
    const store = await this.store.get<StoreRow>(COLL.store, product.store_id);
    if (!store) throw notFound(`store ${product.store_id}`);
    return store;
  }

  /** Rewrites a row unchanged: its version moves on, so a concurrent change of it fails and retries. */
  private touch(kind: Kind, row: AnyRow): WriteOp {
    return { op: 'cas', coll: COLL[kind], doc: { ...row }, expected: row.version! };
  }
}

export function listingOf(p: ProductRow): ListingRow {
  return { id: p.id, merchant_id: p.merchant_id, sandbox: p.sandbox, store_id: p.store_id, search: searchText(p.name, p.description) };
}
