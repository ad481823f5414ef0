/** A local HTTP rate source in CoinGecko's /simple/price shape, for tests of the rates module and its users. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A CoinGecko-compatible /simple/price: prices as raw JSON number text per id and currency, or a failing status. */
export class FakeCoinGecko {
  prices: Record<string, { usd?: string; eur?: string; last_updated_at?: number }> = {};
  status = 200;
  hits: string[] = [];
  private server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    this.hits.push(url.searchParams.get('ids') ?? '');
    if (url.pathname !== '/api/v3/simple/price' || this.status !== 200) {
      res.writeHead(this.status === 200 ? 404 : this.status).end('{"error":"nope"}');
      return;
    }
    const vs = url.searchParams.get('vs_currencies') as 'usd' | 'eur';
    const parts = (url.searchParams.get('ids') ?? '')
      .split(',')
      .filter((id) => this.prices[id]?.[vs] !== undefined)
      .map((id) => {
        const p = this.prices[id];
        return `"${id}":{"${vs}":${p[vs]}${p.last_updated_at !== undefined && url.searchParams.get('include_last_updated_at') === 'true' ? `,"last_updated_at":${p.last_updated_at}` : ''}}`;
      });
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{${parts.join(',')}}`);
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v3`;
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}
