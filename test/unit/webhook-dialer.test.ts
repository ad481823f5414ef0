import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { postWebhook, vetTarget, type DialOptions } from '../../lib/webhooks/dialer.ts';

// self-signed, CN/SAN hooks.example, valid 2000–2100 (test only)
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPRvxZTURPCxbjajq
4yTHVcXQ4S4PjC6+o1hzo4GvMYShRANCAASbbrwqqS8ZimU4gXROvPCsAxjouooT
jcFGj6vQW7JT3BbCrruq3lCGiO+oQkpvkdMpM09JJ08eEaQLP+vYipN7
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBbjCCAROgAwIBAgIBATAKBggqhkjOPQQDAjAYMRYwFAYDVQQDDA1ob29rcy5l
eGFtcGxlMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAwWjAYMRYwFAYD
VQQDDA1ob29rcy5leGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEm268
KqkvGYplOIF0TrzwrAMY6LqKE43BRo+r0FuyU9wWwq67qt5QhojvqEJKb5HTKTNP
SSdPHhGkCz/r2IqTe6NMMEowGAYDVR0RBBEwD4INaG9va3MuZXhhbXBsZTAPBgNV
HRMBAf8EBTADAQH/MB0GA1UdDgQWBBSsTkc8+eSY/mFen+FxwPh4ZTLeoDAKBggq
hkjOPQQDAgNJADBGAiEAsB1Iyb/WKaBFEI6nqj6zRZpJph3G2lrKAcwsgmrIkrsC
IQCmkiK+Cbk1RzAAkHnUK3tfQrzqUdlK+TYF9bAG1MR9Sw==
-----END CERTIFICATE-----`;

interface Seen {
  host?: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const servers: Array<http.Server | net.Server> = [];
async function listen<S extends http.Server | net.Server>(server: S): Promise<{ server: S; port: number }> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

async function receiver(
  handler: Handler = (_q, s) => {
    s.writeHead(200);
    s.end('ok');
  },
) {
  const seen: Seen[] = [];
  const { port } = await listen(
    http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ host: req.headers.host, body, headers: req.headers });
        handler(req, res);
      });
    }),
  );
  return { port, seen };
}

/** A plain TCP listener that only counts connections: proves nothing was dialled. */
async function tcpCounter() {
  const counter = { connections: 0, port: 0 };
  const { port } = await listen(
    net.createServer((s) => {
      counter.connections++;
      s.destroy();
    }),
  );
  counter.port = port;
  return counter;
}

const strict: DialOptions = { allowPrivate: false, timeoutMs: 2000 };
const open: DialOptions = { allowPrivate: true, timeoutMs: 2000 };
const BODY = '{"event_type":"payment_session.completed"}';

afterAll(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise((r) => {
          (s as http.Server).closeAllConnections?.();
          s.close(() => r(null));
        }),
    ),
  );
});

describe('webhook dialer: SSRF guard on the address actually connected', () => {
  it.each([
    ['https://127.0.0.1:PORT/hook'],
    ['https://localhost:PORT/hook'],
    ['https://[::ffff:127.0.0.1]:PORT/hook'],
    ['https://[::ffff:7f00:1]:PORT/hook'],
    ['https://[::1]:PORT/hook'],
    ['https://2130706433:PORT/hook'],
    ['https://0.0.0.0:PORT/hook'],
  ])('refuses %s without connecting when private targets are not allowed', async (template) => {
    const counter = await tcpCounter();
    const r = await postWebhook(template.replace('PORT', String(counter.port)), BODY, {}, strict);
    expect(r).toMatchObject({ ok: false, status: null, error: 'blocked_address' });
    expect(counter.connections).toBe(0);
  });

  it('refuses the metadata address 169.254.169.254 and private ranges', async () => {
    for (const ip of ['169.254.169.254', '10.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '[fd00::1]', '[fe80::1]']) {
      expect((await postWebhook(`https://${ip}/latest/meta-data`, BODY, {}, strict)).error).toBe('blocked_address');
    }
  });

  it('refuses a host when ANY of its addresses is private (no DNS-rebinding pick)', async () => {
    const resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    expect(await vetTarget(new URL('https://mixed.example/'), { allowPrivate: false, resolve })).toEqual({ error: 'blocked_address' });
    const mapped = async () => [{ address: '::ffff:169.254.169.254', family: 6 }];
    expect(await vetTarget(new URL('https://mapped.example/'), { allowPrivate: false, resolve: mapped })).toEqual({
      error: 'blocked_address',
    });
    const pub = async () => [{ address: '93.184.216.34', family: 4 }];
    expect(await vetTarget(new URL('https://public.example/'), { allowPrivate: false, resolve: pub })).toEqual({
      addresses: [{ address: '93.184.216.34', family: 4 }],
    });
  });

  it('refuses plain http unless private targets are allowed, credentials in the URL, and unresolvable hosts', async () => {
    expect((await postWebhook('http://93.184.216.34/hook', BODY, {}, strict)).error).toBe('blocked_url');
    expect((await postWebhook('https://user:pw@93.184.216.34/hook', BODY, {}, strict)).error).toBe('invalid_url');
    expect((await postWebhook('not a url', BODY, {}, strict)).error).toBe('invalid_url');
    expect((await postWebhook('ftp://93.184.216.34/', BODY, {}, open)).error).toBe('blocked_url');
    const nx = async () => {
      throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    };
    expect((await postWebhook('https://nx.invalid/', BODY, {}, { ...strict, resolve: nx })).error).toBe('dns_error');
  });

  it('connects to the vetted address with the original Host header', async () => {
    const rx = await receiver();
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const r = await postWebhook(`http://hooks.example:${rx.port}/in?x=1`, BODY, { 'X-Test': 'a' }, { ...open, resolve });
    expect(r).toMatchObject({ ok: true, status: 200, error: null, remoteAddress: '127.0.0.1' });
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]).toMatchObject({ host: `hooks.example:${rx.port}`, body: BODY });
    expect(rx.seen[0].headers['x-test']).toBe('a');
    expect(rx.seen[0].headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
  });

  it('over https: TLS SNI and certificate check use the original host name', async () => {
    let sni: string | false | null | undefined;
    let host: string | undefined;
    const { port } = await listen(
      https.createServer({ key: KEY, cert: CERT }, (req, res) => {
        sni = (req.socket as import('node:tls').TLSSocket).servername;
        host = req.headers.host;
        req.resume();
        req.on('end', () => {
          res.writeHead(204);
          res.end();
        });
      }),
    );
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const r = await postWebhook(`https://hooks.example:${port}/in`, BODY, {}, { ...open, resolve, ca: CERT });
    expect(r).toMatchObject({ ok: true, status: 204 });
    expect(sni).toBe('hooks.example');
    expect(host).toBe(`hooks.example:${port}`);
    // the same server reached under another name fails the certificate check
    const other = await postWebhook(`https://other.example:${port}/in`, BODY, {}, { ...open, resolve, ca: CERT });
    expect(other).toMatchObject({ ok: false, error: 'tls_error' });
  });
});

describe('webhook dialer: answers', () => {
  it('a 3xx is a failure and the redirect is not followed', async () => {
    const target = await receiver();
    const redirector = await receiver((_q, s) => {
      s.writeHead(302, { Location: `http://127.0.0.1:${target.port}/internal` });
      s.end();
    });
    const r = await postWebhook(`http://127.0.0.1:${redirector.port}/hook`, BODY, {}, open);
    expect(r).toMatchObject({ ok: false, status: 302, error: 'redirect' });
    expect(redirector.seen).toHaveLength(1);
    expect(target.seen).toHaveLength(0);
  });

  it('only 2xx is success', async () => {
    for (const [code, error] of [
      [500, 'http_error'],
      [404, 'http_error'],
      [304, 'redirect'],
      [201, null],
    ] as const) {
      const rx = await receiver((_q, s) => {
        s.writeHead(code);
        s.end();
      });
      const r = await postWebhook(`http://127.0.0.1:${rx.port}/`, BODY, {}, open);
      expect(r).toMatchObject({ ok: code >= 200 && code < 300, status: code, error });
    }
  });

  it('a receiver that never answers times out at the deadline', async () => {
    const rx = await receiver(() => {
      /* never answers */
    });
    const t0 = Date.now();
    const r = await postWebhook(`http://127.0.0.1:${rx.port}/`, BODY, {}, { ...open, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, status: null, error: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('connection refused is classified', async () => {
    const { server, port } = await listen(net.createServer());
    await new Promise((r) => server.close(r));
    expect((await postWebhook(`http://127.0.0.1:${port}/`, BODY, {}, open)).error).toBe('connection_refused');
  });

  it('reads at most maxResponseBytes of the answer, then drops the connection', async () => {
    let finished: boolean | null = null;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const rx = await receiver((_q, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      let sent = 0;
      const pump = () => {
        while (sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        finished = res.writableFinished;
      });
      pump();
    });
    const r = await postWebhook(`http://127.0.0.1:${rx.port}/`, BODY, {}, { ...open, maxResponseBytes: 16 * 1024 });
    expect(r).toMatchObject({ ok: true, status: 200 });
    const deadline = Date.now() + 10_000;
    while (finished === null && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    expect(finished).toBe(false);
  });
});
