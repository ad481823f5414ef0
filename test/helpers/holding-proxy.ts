/** A JSON-RPC pass-through for kill tests: it forwards eth_sendRawTransaction (the transaction lands) but never answers it. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HoldingProxy {
  url: string;
  /** resolves once a raw transaction was forwarded and left unanswered */
  held: Promise<void>;
  close(): Promise<void>;
}

export async function holdingProxy(target: string): Promise<HoldingProxy> {
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    onHeld = r;
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = await fetch(target, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }).then((r) => r.text());
      if (body.includes('eth_sendRawTransaction')) {
        onHeld(); // forwarded (the transaction is on chain now); the caller never hears back
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
