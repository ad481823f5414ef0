/**
 * `npm run repl` joins the running service: the one-process default (`node index.ts`, no TRANSPORTER)
 * through the socket it opens in its data dir, a cluster node over TRANSPORTER (real NATS). `nodes`,
 * `services` and `call merchants.me --merchant_id …` answer from the service itself; a REPL without the
 * service's cluster key sees nothing of it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { register } from '../../sdk/src/index.ts';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';
import { ensureNats } from '../helpers/nats.ts';
import { eventually } from '../helpers/wait.ts';

jest.setTimeout(180_000);

interface Repl {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  ask(line: string, expected: string | RegExp): Promise<string>;
  quit(): Promise<void>;
}

function startRepl(env: Record<string, string>): Repl {
  const child = spawn(process.execPath, ['scripts/repl.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'error', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  // moleculer-repl colours what it inspects: compare the text
  // eslint-disable-next-line no-control-regex
  const plain = (d: Buffer) => d.toString().replace(/\x1b\[[0-9;]*m/g, '');
  child.stdout.on('data', (d: Buffer) => (out += plain(d)));
  child.stderr.on('data', (d: Buffer) => (out += plain(d)));
  return {
    child,
    output: () => out,
    async ask(line, expected) {
      await eventually('the REPL prompt', () => out.includes('payments $'), 60_000, 50);
      const from = out.length;
      child.stdin.write(`${line}\n`);
      await eventually(
        `the answer to ${line}`,
        () => (typeof expected === 'string' ? out.slice(from).includes(expected) : expected.test(out.slice(from))),
        60_000,
        50,
      );
      return out.slice(from);
    },
    async quit() {
      if (child.exitCode !== null) return;
      child.stdin.write('quit\n');
      // the deadline's timer unref'd: left running after the REPL quit, it held the jest worker open past its exit deadline
      await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, 10_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** A sandbox merchant registered through the SDK, its code read from the node's log (no SMTP_URL). */
async function merchantOn(node: ChildNode): Promise<string> {
  const email = `repl${randomBytes(3).toString('hex')}@repl.test`;
  const m = await register({
    baseUrl: node.url,
    email,
    name: 'REPL Shop',
    getCode: () =>
      eventually('the code in the log', () => new RegExp(`to=${email}[^\\n]*\\n[^\\n]*code is (\\d{6})`).exec(node.output())?.[1], 30_000),
  });
  return m.id;
}

describe('npm run repl joins the running service', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'repl-join-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('in the one-process default: through the socket the service opens in its data dir', async () => {
    const dataDir = fresh();
    const nodeId = `svc-${randomBytes(3).toString('hex')}`;
    const node = await spawnNode({ DATA_DIR: dataDir, NODE_ID: nodeId, TRUSTED_EMAIL_DOMAINS: 'repl.test' });
    const repl = startRepl({ DATA_DIR: dataDir });
    try {
      expect(statSync(join(dataDir, 'node.sock')).mode & 0o777).toBe(0o600);
      const merchantId = await merchantOn(node);
      const nodes = await repl.ask('nodes', nodeId);
      expect(repl.output()).toContain('joined the running service');
      expect(nodes).toMatch(/operator-\d+ \(\*\)/);
      const services = await repl.ask('services', 'session-actors');
      expect(services).toMatch(/merchants\s/);
      const me = await repl.ask(`call merchants.me --merchant_id ${merchantId}`, "name: 'REPL Shop'");
      expect(me).toMatch(new RegExp(`>> Response:[\\s\\S]*id: '${merchantId}'`));
      // the operator commands act through the service's own operators service
      await repl.ask('trust-domain other.test', '"trusted": true');
    } finally {
      await repl.quit();
      await node.stop();
    }
  });

  it('without the service’s cluster key a REPL sees nothing of it and says so', async () => {
    const dataDir = fresh();
    const node = await spawnNode({ DATA_DIR: dataDir });
    try {
      const rogue = startRepl({ DATA_DIR: dataDir, CLUSTER_SECRET: 'not-this-services-cluster-key' });
      const code = await new Promise<number | null>((r) => rogue.child.once('exit', r));
      expect(code).toBe(1);
      expect(rogue.output()).toMatch(
        /cannot start the REPL: no operators service answered within 10 s on the local socket: .*same cluster key/,
      );
      expect(node.output()).toMatch(/dropped \d+ cluster packet\(s\) not sealed with this cluster's key/);
    } finally {
      await node.stop();
    }
  });

  it('in a cluster: over TRANSPORTER', async () => {
    const nats = await ensureNats();
    const env = {
      TRANSPORTER: nats,
      NAMESPACE: `repl-${randomBytes(4).toString('hex')}`,
      MASTER_KEY: randomBytes(32).toString('hex'),
      TRUSTED_EMAIL_DOMAINS: 'repl.test',
    };
    const dataDir = fresh();
    const nodeId = `cluster-${randomBytes(3).toString('hex')}`;
    const node = await spawnNode({ ...env, DATA_DIR: dataDir, NODE_ID: nodeId });
    const repl = startRepl({ ...env, DATA_DIR: fresh() });
    try {
      const merchantId = await merchantOn(node);
      await repl.ask('nodes', nodeId);
      expect(repl.output()).toContain('joined the cluster over TRANSPORTER');
      const me = await repl.ask(`call merchants.me --merchant_id ${merchantId}`, "name: 'REPL Shop'");
      expect(me).toMatch(new RegExp(`>> Response:[\\s\\S]*id: '${merchantId}'`));
    } finally {
      await repl.quit();
      await node.stop();
    }
  });
});
