/**
 * Audit events, from one module: every audit row is made by `auditOp`, which returns the write for the
 * caller to commit in the same atomic `store.write` as the change it records (so a change and its audit
 * row exist together or not at all). Rows are append-only in `audit_events`. Never put secrets in
 * `detail` (API keys, webhook secrets, signatures, seeds): the row is read by operators.
 */
import { newId } from './ids.ts';
import type { WriteOp } from '../store/port.ts';

export const AUDIT_COLLECTION = 'audit_events';

/** What an audit row may say besides its type and time: ids, environment, outcomes, counts. */
export type AuditDetail = Record<string, unknown> & { merchant_id?: string | null };

export interface AuditRow extends AuditDetail {
  id: string;
  type: string;
  created_at: string;
}

/**
 * The insert of one audit row of `type` at `at`. The row is due for sealing at once (`seal_due_at`): the
 * sealer (lib/ops/audit-chain.ts) links it into its merchant's hash chain after the commit, so this
 * insert needs no read and never makes the caller's write conflict.
 */
export function auditOp(type: string, detail: AuditDetail, at: Date | string): WriteOp {
  const createdAt = typeof at === 'string' ? at : at.toISOString();
  const doc: AuditRow = { id: newId('aud'), type, ...detail, created_at: createdAt, seal_due_at: createdAt };
  return { op: 'insert', coll: AUDIT_COLLECTION, doc };
}
