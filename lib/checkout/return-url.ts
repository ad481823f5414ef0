/**
 * The way back to the shop: a session's optional `return_url`, linked from the checkout page once the
 * session is paid or expired. The buyer's browser follows it (the service never fetches it), so the rule
 * is about what a link may be: https, or http too where WEBHOOK_ALLOW_PRIVATE allows local development;
 * never another scheme (javascript:, data:) and never credentials.
 */
import { badRequest } from '../core/errors.ts';

export const RETURN_URL_MAX = 2048;

/** The URL to store (normalized), or a 400 naming return_url. `allowHttp`: WEBHOOK_ALLOW_PRIVATE. */
export function checkReturnUrl(raw: string, allowHttp: boolean): string {
  const remediation = allowHttp
    ? 'Send return_url as an absolute http or https URL of your shop, e.g. https://shop.example/orders/1001.'
    : 'Send return_url as an absolute https URL of your shop, e.g. https://shop.example/orders/1001 (plain http is accepted only with WEBHOOK_ALLOW_PRIVATE=1, for local development).';
  const refuse = (message: string) => badRequest(message, { field: 'return_url', remediation });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('return_url is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) throw refuse('return_url must use https');
  if (url.username || url.password) throw refuse('return_url must not contain credentials');
  if (url.href.length > RETURN_URL_MAX) throw refuse(`return_url must be at most ${RETURN_URL_MAX} characters`);
  return url.href;
}
