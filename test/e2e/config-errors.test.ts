/**
 * A bad setting stops `npm start` (node index.ts) and the operator commands with one line naming the
 * variable, its value (secrets masked) and what it must be, exit status 78 and no stack trace; operator
 * usage is printed once, and only on a usage error.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[], env: Record<string, string>, dataDir: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Run = { code: null, stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      out.code = code;
      resolve(out);
    });
  });
}

const SECRET = 'k3ep-th1s-0ut-of-logs';

const CASES: Array<{ env: Record<string, string>; line: RegExp }> = [
  { env: { RATE_SOURCES: 'static' }, line: /^RATE_SOURCES="static": must be <pair or \*>=<sources>.*e\.g\. \*=chainlink,http,static,peg/ },
  {
    env: { ALERT_WEBHOOK_URL: 'https://ops.example/alerts' },
    line: /^ALERT_WEBHOOK_SECRET=\(empty\): must be set, at least 16 characters, when ALERT_WEBHOOK_URL is/,
  },
  {
    env: { ALERT_WEBHOOK_URL: 'https://ops.example/alerts', ALERT_WEBHOOK_SECRET: 'short' },
    line: /^ALERT_WEBHOOK_SECRET=\(hidden, 5 characters\)/,
  },
  { env: { MASTER_KEY: SECRET }, line: /^MASTER_KEY=\(hidden, 21 characters\): must be 64 hex characters/ },
  { env: { CLUSTER_SECRET: 'abc' }, line: /^CLUSTER_SECRET=\(hidden, 3 characters\): must be at least 16 characters/ },
  { env: { SEED_MNEMONIC: `${SECRET} two three` }, line: /^SEED_MNEMONIC=\(hidden, \d+ characters\): must be a valid BIP-39/ },
  { env: { SMTP_URL: `mail.example:25` }, line: /^SMTP_URL="mail.example:25": must be smtp:\/\/user:pass@host:port/ },
  {
    env: { STORE_URL: `mysql://app:${SECRET}@db:3306/x` },
    line: /^STORE_URL="mysql:\/\/app:\*\*\*@db:3306\/x": must be sqlite:<path>, postgres:/,
  },
  {
    env: { ETHEREUM_MAINNET_RPC_URL: `ftp://rpc.example/v3/${SECRET}` },
    line: /^ETHEREUM_MAINNET_RPC_URL="ftp:\/\/rpc.example\/…": must be an http\(s\):\/\/ or ws\(s\):\/\/ JSON-RPC URL/,
  },
  { env: { PORT: '99999' }, line: /^PORT="99999": must be a whole number from 0 to 65535$/ },
  { env: { WEBHOOK_ALLOW_PRIVATE: 'ture' }, line: /^WEBHOOK_ALLOW_PRIVATE="ture": must be 1, true, yes or on/ },
  { env: { LOG_LEVEL: 'verbose' }, line: /^LOG_LEVEL="verbose": must be one of fatal, error, warn, info, debug, trace$/ },
  {
    env: { TRUSTED_PROXIES: '10.0.0.0/33' },
    line: /^TRUSTED_PROXIES="10.0.0.0\/33": must be a comma-separated list of IP addresses or CIDRs/,
  },
  { env: { SERVICES: 'api,sesions' }, line: /^SERVICES="api,sesions": names services among api, .*'sesions' is not one$/ },
  {
    env: { MASTER_KEY_FILE: '/nonexistent/master.key' },
    line: /^MASTER_KEY_FILE="\/nonexistent\/master.key": must name a readable file holding MASTER_KEY \(ENOENT\)$/,
  },
  { env: { NATS_TLS_CA_FILE: '/nonexistent/ca.pem' }, line: /^NATS_TLS_CA_FILE="\/nonexistent\/ca.pem": must name an existing PEM file$/ },
];

describe('configuration errors', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'config-errors-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('npm start: one line naming the variable, the value (secrets masked) and what is expected; exit 78, no stack', async () => {
    // four at a time: each is a Node process loading the service's modules
    const results: Run[] = [];
    for (let i = 0; i < CASES.length; i += 4)
      results.push(...(await Promise.all(CASES.slice(i, i + 4).map((c) => run('index.ts', [], c.env, dataDir)))));
    results.forEach((r, i) => {
      const where = JSON.stringify(CASES[i].env);
      expect([where, r.code]).toEqual([where, 78]);
      expect([where, r.stdout]).toEqual([where, '']);
      const lines = r.stderr.split('\n').filter(Boolean);
      expect([where, lines.length]).toEqual([where, 1]);
      expect(lines[0]).toMatch(/^configuration error: /);
      expect(lines[0].slice('configuration error: '.length)).toMatch(CASES[i].line);
      expect(r.stderr).not.toContain(SECRET);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }, 300_000);

  it('operator commands: the same line and 78 for a bad setting; usage once, on a usage error only', async () => {
    const bad = await run('scripts/operator.ts', ['list-trust'], { RATE_SOURCES: 'static' }, dataDir);
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/^configuration error: RATE_SOURCES="static": must be .*\n$/);

    const unknown = await run('scripts/operator.ts', ['trust-domian', 'shop.example'], {}, dataDir);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error: unknown command "trust-domian"\n\nusage: npm run operator -- <command> \[args\]\n/);
    expect(unknown.stderr.match(/usage:/g)).toHaveLength(1);

    const missing = await run('scripts/operator.ts', ['trust-domain'], {}, dataDir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: trust-domain takes <domain>\n\nusage:/);
    expect(missing.stderr.match(/usage:/g)).toHaveLength(1);

    const help = await run('scripts/operator.ts', ['help'], {}, dataDir);
    expect(help.code).toBe(0);
    expect(help.stdout.match(/usage:/g)).toHaveLength(1);
    expect(help.stderr).toBe('');

    // a command that works prints no usage
    const ok = await run('scripts/operator.ts', ['trust-domain', 'shop.example'], {}, dataDir);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ trusted: true });
    expect(ok.stdout + ok.stderr).not.toMatch(/usage:/);
  }, 120_000);
});
