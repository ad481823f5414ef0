/**
 * The request id every HTTP answer carries: the `X-Request-Id` header of every response (success or
 * not), `request_id` in every error envelope, and the id in the server's log line for that request, so a
 * merchant can quote one string and an operator find the request. A caller's own id is kept when it is
 * sane (a load balancer's or a client's trace id); anything else gets a fresh one, so a header can never
 * inject text into the log.
 */
import { newId } from '../core/ids.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Letters, digits and a few separators, at most 128 characters: UUIDs, ULIDs, trace ids. */
const SANE = /^[A-Za-z0-9][A-Za-z0-9._:@+=/-]{0,127}$/;

/** The incoming id when it is sane, else a new `req_…` id. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return typeof value === 'string' && SANE.test(value) ? value : newId('req');
}

/** The one log line of a finished request (route template, never the raw path: ids in paths are capabilities). */
export function accessLine(r: { requestId: string; method: string; route: string; status: number; ms: number; finished: boolean }): string {
  return `${r.method} ${r.route} ${r.status} ${r.ms.toFixed(1)}ms${r.finished ? '' : ' (client left)'} request_id=${r.requestId}`;
}
