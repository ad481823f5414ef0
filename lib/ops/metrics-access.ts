/**
 * Who may read /metrics on the API port (METRICS_PORT unset): with METRICS_TOKEN set, a caller with
 * `Authorization: Bearer <token>`; without it, only a direct local caller (loopback peer and no
 * X-Forwarded-For, so a reverse proxy on the same host does not make the world local). A separate
 * METRICS_PORT is for the operators' network and honours the token when one is set.
 */
import type { IncomingMessage } from 'node:http';
import { constantTimeEqual } from '../core/secrets.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

export function mayReadMetrics(req: Pick<IncomingMessage, 'headers' | 'socket'>, token: string, onApiPort: boolean): boolean {
  if (token) {
    const m = /^Bearer\s+(\S+)$/.exec(req.headers.authorization ?? '');
    return m !== null && constantTimeEqual(m[1], token);
  }
  if (!onApiPort) return true;
  return LOOPBACK.test(req.socket.remoteAddress ?? '') && req.headers['x-forwarded-for'] === undefined;
}
