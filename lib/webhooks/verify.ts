/**
 * Merchant-facing verification of a webhook request (scheme v1, see signature.ts):
 *
 *   import { verifyWebhook } from './lib/webhooks/verify.ts';
 *   verifyWebhook(rawBody, req.headers['x-service-signature'], process.env.WEBHOOK_SECRET); // throws if bad
 *
 * Pass the raw request body exactly as received (the bytes, before any JSON parsing). The timestamp must
 * be within `toleranceSeconds` (default 300) of `now`, in either direction; any v1 signature in the
 * header may match (there are several during a secret rotation). Comparison is constant-time.
 *
 * One implementation: the SDK's (what merchants run), so the service and its clients never disagree.
 * Signing stays in signature.ts.
 */
export {
  DEFAULT_TOLERANCE_SECONDS,
  WebhookVerificationError,
  isValidWebhook,
  verifyWebhook,
  type VerifyOptions,
  type WebhookVerificationReason,
} from '@stablecoin-payments/sdk/webhooks';
