/** A TCP pass-through whose link can be cut (open connections reset, new ones refused) and healed. */
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableLink {
  port: number;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function cuttableLink(host: string, port: number): Promise<CuttableLink> {
  let open = true;
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((inbound) => {
    if (!open) return inbound.resetAndDestroy();
    const outbound = connect(port, host);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const link: CuttableLink = {
    port: (server.address() as AddressInfo).port,
    cut() {
      open = false;
      for (const [i, o] of pairs) {
        i.resetAndDestroy();
        o.destroy();
      }
      pairs.clear();
    },
    heal() {
      open = true;
    },
    close() {
      link.cut();
      return new Promise((r) => server.close(() => r()));
    },
  };
  return link;
}
