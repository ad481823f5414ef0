/**
 * The SDK as an npm user gets it: `npm pack` in a copy of sdk/ (its prepack builds JavaScript and .d.ts into
 * dist/), the tarball installed offline into a fresh plain-JS project, and the oldest Node the package
 * supports (20; /usr/bin/node when it is one, else the Node running the tests) running an ES module and
 * a CommonJS script against a started node, and the package's `payments` bin. TypeScript checks a
 * consumer against the package's declaration files.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { lockForTarball } from '../helpers/npm-offline.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: () => Promise<string> }): Promise<Run> {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  if (opts.input) void opts.input().then((text) => child.stdin.end(text));
  else child.stdin.end();
  return new Promise((r) =>
    child.on('close', (code) => {
      out.code = code;
      r(out);
    }),
  );
}

/** Node 20 when the machine has it as /usr/bin/node (the floor the package promises), else this one. */
function oldestNode(): string {
  try {
    const v = execFileSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (Number(v.split('.')[0]) >= 20) return '/usr/bin/node';
  } catch {
    /* none there */
  }
  return process.execPath;
}

const REPO = resolve('.');

/**
 * A copy of sdk/ to pack, inside the repository (its TypeScript and @types resolve from there), with the
 * sdk's own node_modules linked. `npm pack` rewrites the manifest it packs while it runs (prepack,
 * postpack): run in sdk/ itself, a node that a parallel test started at that moment failed to import
 * @stablecoin-payments/sdk ("Invalid package config sdk/package.json").
 */
function sdkCopy(): string {
  mkdirSync(join(REPO, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(join(REPO, 'node_modules/.cache/sdk-pack-'));
  const source = join(REPO, 'sdk');
  cpSync(source, dir, { recursive: true, filter: (src) => ![join(source, 'node_modules'), join(source, 'dist')].includes(src) });
  symlinkSync(join(source, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

// a plain ES module: registration (the proof of work on a worker thread), a session paid by simulation,
// its event, a webhook signature, a typed error, the x402 header codec
const ESM = `import { createInterface } from 'node:readline';
import { createPaymentsClient, register, verifyWebhook, signatureHeader, NotFoundError } from '@stablecoin-payments/sdk';
import { encodeHeader, decodeHeader } from '@stablecoin-payments/sdk/x402';

const baseUrl = process.env.BASE_URL;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const merchant = await register({
  baseUrl, email: process.env.EMAIL, name: 'Plain JS Shop',
  getCode: async () => (await lines.next()).value,
});
const payments = createPaymentsClient({ baseUrl, apiKey: merchant.api_key });
const session = await payments.sessions.create({ amount: 3.5, expires_in: '30m', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } });
const paid = await payments.sessions.simulate(session.session_id);
let event;
for await (const e of payments.events.all({ type: 'payment_session.completed' })) if (e.session_id === session.session_id) event = e;
const raw = JSON.stringify({ event_type: 'ping' });
let missing;
try {
  await payments.sessions.get('ps_00000000000000000000000000');
} catch (e) {
  missing = { notFound: e instanceof NotFoundError, status: e.status, request_id: e.request_id };
}
console.log(JSON.stringify({
  node: process.versions.node, api_key: merchant.api_key, session_id: session.session_id, status: paid.status,
  event: event && event.event_type, signed: verifyWebhook(raw, signatureHeader(raw, merchant.webhook_secret), merchant.webhook_secret),
  x402: decodeHeader(encodeHeader({ amount: '1' })), missing,
}));
process.exit(0);
`;

// CommonJS: require() of the ES module package (Node 20.19 and later)
const CJS = `const { createPaymentsClient, verifyWebhook } = require('@stablecoin-payments/sdk');
createPaymentsClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY })
  .me()
  .then((me) => console.log(JSON.stringify({ id: me.id, name: me.name, verify: typeof verifyWebhook })));
`;

// a TypeScript consumer, type-checked against the declaration files only
const TS = `import { createPaymentsClient, PaymentsError, type PaymentSession } from '@stablecoin-payments/sdk';
import { verifyWebhook } from '@stablecoin-payments/sdk/webhooks';
import type { components } from '@stablecoin-payments/sdk/schema';

const payments = createPaymentsClient({ baseUrl: 'http://localhost:3000' });
export const session: Promise<PaymentSession> = payments.sessions.get('ps_1');
export const ok: boolean = verifyWebhook('{}', 't=1,v1=00', 'secret');
export const status: components['schemas']['PaymentSession']['status'] = 'completed';
export const code: number = new PaymentsError(400, 3, 'bad').code;
// @ts-expect-error an amount is a number in the API's types
export const amount: PaymentSession['expected_amount'] = '12.5';
`;

describe('the SDK packed with npm pack, installed into a plain-JS project', () => {
  let t: TestNode;
  let work: string;
  let project: string;
  let sdk: string;
  const node = oldestNode();

  beforeAll(async () => {
    t = await startTestNode({ POW_DIFFICULTY: '8' });
    await t.call('operators.trustDomain', { value: 'pack.test' });
    work = mkdtempSync(join(tmpdir(), 'sdk-pack-'));
    project = join(work, 'shop');
    mkdirSync(project);
    sdk = sdkCopy();
  });
  afterAll(async () => {
    await t?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    if (sdk) rmSync(sdk, { recursive: true, force: true });
  });

  it('npm pack builds JavaScript and .d.ts, and the tarball installs from the npm cache alone', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: sdk });
    expect(packed).toMatchObject({ code: 0 });
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/src/node.js', 'dist/src/node.d.ts', 'dist/bin/payments.js']));
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // the source package.json is back as it was (the packed one points at dist/)
    expect(JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8')).exports['.'].node).toBe('./src/node.ts');
    expect(existsSync(join(sdk, '.package.source.json'))).toBe(false);
    // byte for byte the manifest copied from sdk/
    expect(readFileSync(join(sdk, 'package.json'), 'utf8')).toBe(readFileSync(join(REPO, 'sdk/package.json'), 'utf8'));

    const manifest = JSON.parse(
      execFileSync('tar', ['xzf', join(work, info.filename), '-O', 'package/package.json'], { encoding: 'utf8' }),
    );
    expect(manifest.exports['.'].node).toEqual({ types: './dist/src/node.d.ts', default: './dist/src/node.js' });
    expect(manifest.bin).toEqual({ payments: './dist/bin/payments.js' });
    expect(manifest.scripts).toBeUndefined();
    const bin = readFileSync(join(sdk, 'dist/bin/payments.js'), 'utf8');
    expect(bin.startsWith('#!/usr/bin/env node\n')).toBe(true);

    execFileSync('cp', [join(work, info.filename), join(project, 'sdk.tgz')]);
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'shop', version: '1.0.0', private: true, type: 'module', dependencies: { [manifest.name]: 'file:sdk.tgz' } }, null, 2)}\n`,
    );
    const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', cwd: project }).trim();
    const lock = lockForTarball({ project: 'shop', tarball: 'sdk.tgz', manifest, workspace: 'sdk', registry });
    writeFileSync(join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
    const installed = await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: project });
    if (installed.code !== 0) throw new Error(`npm ci --offline failed:\n${installed.stdout}${installed.stderr}`);
    expect(existsSync(join(project, 'node_modules/.bin/payments'))).toBe(true);
  }, 300_000);

  it('runs as an ES module on Node 20: registers, creates and simulates a session, reads its event, verifies a signature', async () => {
    writeFileSync(join(project, 'shop.mjs'), ESM);
    const email = `shop${Date.now()}@pack.test`;
    const r = await run(node, ['shop.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH, BASE_URL: t.url, EMAIL: email },
      input: async () => `${await t.mailer.waitForCode(email)}\n`,
    });
    if (r.code !== 0) throw new Error(`shop.mjs failed:\n${r.stdout}${r.stderr}`);
    const got = JSON.parse(r.stdout);
    expect(Number(got.node.split('.')[0])).toBeGreaterThanOrEqual(20);
    if (node === '/usr/bin/node') expect(got.node).toBe(execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim());
    expect(got).toMatchObject({
      api_key: expect.stringMatching(/^service_sk_test_/),
      session_id: expect.stringMatching(/^ps_/),
      status: 'completed',
      event: 'payment_session.completed',
      signed: true,
      x402: { amount: '1' },
      missing: { notFound: true, status: 404, request_id: expect.stringMatching(/^req_/) },
    });

    // CommonJS, through require() of the package
    writeFileSync(join(project, 'me.cjs'), CJS);
    const cjs = await run(node, ['me.cjs'], { cwd: project, env: { PATH: process.env.PATH, BASE_URL: t.url, API_KEY: got.api_key } });
    if (cjs.code !== 0) throw new Error(`me.cjs failed:\n${cjs.stdout}${cjs.stderr}`);
    expect(JSON.parse(cjs.stdout)).toMatchObject({ id: expect.stringMatching(/^mer_/), name: 'Plain JS Shop', verify: 'function' });

    // the bin, run by the Node its shebang finds first on PATH
    const env = {
      PATH: `${dirname(node)}:${process.env.PATH}`,
      HOME: work,
      PAYMENTS_CONFIG: join(work, 'config.json'),
      PAYMENTS_BASE_URL: t.url,
      PAYMENTS_API_KEY: got.api_key,
    };
    const payments = (args: string[]) => run(join(project, 'node_modules/.bin/payments'), args, { cwd: project, env });
    const help = await payments(['--help']);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: payments/) });
    const config = await payments(['--json', 'config']);
    expect(JSON.parse(config.stdout)).toMatchObject({ base_url: t.url, api_key_set: true });
    const listed = await payments(['--json', 'sessions', 'list', '--status', 'completed']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).data.map((s: { session_id: string }) => s.session_id)).toContain(got.session_id);
    const table = await payments(['sessions', 'get', got.session_id]);
    expect(table.stdout).toMatch(new RegExp(`session_id\\s+${got.session_id}\\nstatus\\s+completed`));
    const missing = await payments(['sessions', 'get', 'ps_00000000000000000000000000']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/^Error: .*\n {2}fix: .+\n {2}request id: req_\w+\n$/);
  }, 120_000);

  it("type-checks a TypeScript consumer against the package's declaration files", async () => {
    writeFileSync(join(project, 'check.ts'), TS);
    // the TypeScript a consumer would have (5.x, the SDK workspace's); @types/node from this repository
    const tsc = createRequire(join(REPO, 'sdk/package.json')).resolve('typescript/bin/tsc');
    const r = await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        '--typeRoots',
        join(REPO, 'node_modules/@types'),
        'check.ts',
      ],
      { cwd: project },
    );
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.code).toBe(0);
  }, 120_000);
});
