/**
 * Operator actions: trust allowlists, invitation tokens, bearer users, KYC status and rate limits.
 * Stored, so they take effect on every node without a restart. Reached through `npm run repl` (custom
 * commands) and `scripts/operator.ts`; not exposed over HTTP.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { badRequest } from '../lib/core/errors.ts';
import { randomToken } from '../lib/core/ids.ts';
import { auditOp, type AuditDetail } from '../lib/core/audit.ts';
import { sha256Hex } from '../lib/core/secrets.ts';
import { normalizeEmail } from '../lib/onboarding/trust.ts';
import type { KycStatus, MerchantMsg, MerchantReply } from '../lib/merchants/merchant.ts';
import { sendToActor } from '../mixins/actor-host.mixin.ts';
import { DEPOSIT_STATUSES, type DepositDoc, type DepositStatus } from '../lib/chains/deposit-inbox.ts';
import type { Filter } from '../lib/store/port.ts';

const KYC: KycStatus[] = ['none', 'pending', 'verified', 'rejected'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

export function createOperatorsService(rt: Runtime): ServiceSchema {
  const { store } = rt;
  const at = () => rt.now().toISOString();
  const audit = (type: string, detail: AuditDetail) => auditOp(type, detail, at());

  const listEntry = (coll: 'trusted_emails' | 'trusted_domains', pattern: RegExp) => ({
    async add(ctx: Context<{ value: string }>) {
      const id = normalizeEmail(String(ctx.params.value ?? ''));
      if (!pattern.test(id)) throw badRequest(`not a valid ${coll === 'trusted_emails' ? 'email' : 'domain'}: ${id}`);
      await store.write([
        { op: 'upsert', coll, doc: { id, source: 'operator', created_at: at() } },
        audit(`operator.${coll}.added`, { value: id }),
      ]);
      return { [coll]: id, trusted: true };
    },
    async remove(ctx: Context<{ value: string }>) {
      const id = normalizeEmail(String(ctx.params.value ?? ''));
      await store.write([{ op: 'delete', coll, id }, audit(`operator.${coll}.removed`, { value: id })]);
      return { [coll]: id, trusted: false };
    },
  });
  const emails = listEntry('trusted_emails', EMAIL);
  const domains = listEntry('trusted_domains', DOMAIN);

  return {
    name: 'operators',
    actions: {
      trustEmail: { visibility: 'public', handler: emails.add },
      untrustEmail: { visibility: 'public', handler: emails.remove },
      trustDomain: { visibility: 'public', handler: domains.add },
      untrustDomain: { visibility: 'public', handler: domains.remove },
      listTrust: {
        visibility: 'public',
        async handler() {
          return {
            emails: (await store.find('trusted_emails', {})).map((d) => d.id),
            domains: (await store.find('trusted_domains', {})).map((d) => d.id),
          };
        },
      },
      /** An invitation token (shown once), optionally bound to one email, valid for `days`. */
      createInvitation: {
        visibility: 'public',
        async handler(ctx: Context<{ email?: string; days?: number }>) {
          const token = `inv_${randomToken(24)}`;
          const email = ctx.params.email ? normalizeEmail(ctx.params.email) : null;
          if (email && !EMAIL.test(email)) throw badRequest('not a valid email');
          const days = Number(ctx.params.days ?? 7);
          if (!(days > 0 && days <= 3650)) throw badRequest('days must be a positive number of days, at most 3650');
          const expires_at = new Date(rt.now().getTime() + days * 86_400_000).toISOString();
          const id = sha256Hex(token);
          await store.write([
            { op: 'insert', coll: 'invitations', doc: { id, email, expires_at, used_by: null, created_at: at() } },
            audit('operator.invitation.created', { invitation_id: id.slice(0, 12) }),
          ]);
          return { invitation_token: token, email, expires_at };
        },
      },
      /** A user who may register live merchants with `Authorization: Bearer <token>` (shown once). */
      createUser: {
        visibility: 'public',
        async handler(ctx: Context<{ email: string; name?: string }>) {
          const email = normalizeEmail(String(ctx.params.email ?? ''));
          if (!EMAIL.test(email)) throw badRequest('not a valid email');
          const token = `usr_${randomToken(32)}`;
          const id = sha256Hex(token);
          await store.write([
            { op: 'insert', coll: 'bearer_users', doc: { id, email, name: ctx.params.name ?? email, created_at: at() } },
            audit('operator.user.created', { email }),
          ]);
          return { email, bearer_token: token };
        },
      },
      setKyc: {
        visibility: 'public',
        async handler(ctx: Context<{ merchant_id: string; status: KycStatus }>) {
          if (!KYC.includes(ctx.params.status)) throw badRequest(`status must be one of ${KYC.join(', ')}`);
          const msg: MerchantMsg = { type: 'set_kyc', status: ctx.params.status };
          const { merchant } = await sendToActor<MerchantMsg, MerchantReply>(ctx, 'merchant-actors', ctx.params.merchant_id, msg);
          return { merchant_id: merchant.id, kyc_status: merchant.kyc_status };
        },
      },
      /**
       * Deposits the chain listeners stored (newest first): `status` (seen, credited, reverted, orphan;
       * `orphans: true` is status orphan), `session_id`, `chain`, `network`; `limit` 1..1000 (default 50).
       */
      listDeposits: {
        visibility: 'public',
        async handler(
          ctx: Context<{ status?: string; orphans?: boolean; session_id?: string; chain?: string; network?: string; limit?: number }>,
        ) {
          const p = ctx.params ?? {};
          const status = p.orphans ? 'orphan' : p.status;
          if (status !== undefined && !DEPOSIT_STATUSES.includes(status as DepositStatus))
            throw badRequest(`status must be one of ${DEPOSIT_STATUSES.join(', ')}`);
          const limit = p.limit === undefined ? 50 : Number(p.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000');
          // every deposit has its time: said, so that PostgreSQL pages the index in its order
          const filter: Filter = { created_at: { $exists: true } };
          if (status) filter.status = status;
          for (const k of ['session_id', 'chain', 'network'] as const) if (typeof p[k] === 'string' && p[k]) filter[k] = p[k]!;
          const deposits = await store.find<DepositDoc>('deposits', filter, { sort: 'created_at', desc: true, limit });
          return {
            deposits: deposits.map(({ version: _v, ...d }) => d),
            count: deposits.length,
          };
        },
      },
      setRateLimit: {
        visibility: 'public',
        async handler(ctx: Context<{ merchant_id: string; rate_limit_per_minute: number }>) {
          const n = Number(ctx.params.rate_limit_per_minute);
          if (!Number.isInteger(n) || n < 1) throw badRequest('rate_limit_per_minute must be a positive integer');
          const msg: MerchantMsg = { type: 'set_rate_limit', rate_limit_per_minute: n };
          const { merchant } = await sendToActor<MerchantMsg, MerchantReply>(ctx, 'merchant-actors', ctx.params.merchant_id, msg);
          return { merchant_id: merchant.id, rate_limit_per_minute: merchant.rate_limit_per_minute };
        },
      },
    },
  };
}
