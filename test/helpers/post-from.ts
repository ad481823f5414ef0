/** A JSON POST from a chosen loopback source address: each address is its own client (source) to the service. */
import { request as httpRequest } from 'node:http';

export function postFrom(
  baseUrl: string,
  path: string,
  body: unknown,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const raw = JSON.stringify(body);
    const u = new URL(baseUrl + path);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(raw), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.once('error', reject);
    req.end(raw);
  });
}
