// Generated from openapi.json by `npm run generate -w @stablecoin-payments/sdk`; do not edit.
/* eslint-disable */
/** Operations that take an Idempotency-Key header (METHOD path). */
export const IDEMPOTENT_OPERATIONS: readonly string[] = [
  'POST /v1/payment_sessions',
  'POST /v1/payment_sessions/{session_id}/refunds',
  'POST /v1/payouts',
  'POST /v1/plans',
  'POST /v1/prices',
  'POST /v1/products',
  'POST /v1/stores'
];
