/**
 * The child-node helper counts a node as up only when the answer on its port is its own: a port freePort
 * handed out can be taken by a parallel test's server before the child binds it, and that server answers
 * GET /v1/payment_methods just as well while the child dies of EADDRINUSE (a CI run read its logs from a
 * node that was not there).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode } from '../helpers/child-node.ts';
import { ExitedBeforeListening, listensOn, untilListening } from '../helpers/ports.ts';
import { eventually } from '../helpers/wait.ts';

/** a server that answers every request 200 with a payment-methods-shaped body: a stranger on the port */
async function stranger(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('a child node on a port someone else took', () => {
  it('listensOn tells the process that holds a port from one that does not', async () => {
    const { server, port } = await stranger();
    const other = spawn(
      process.execPath,
      ['-e', `require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })`],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let otherPort: number;
    try {
      otherPort = Number(await new Promise<string>((r) => other.stdout!.once('data', (d: Buffer) => r(d.toString()))));
      expect(listensOn(process.pid, port)).toBe(true);
      expect(listensOn(other.pid!, port)).toBe(false);
      expect(listensOn(other.pid!, otherPort)).toBe(true);
      expect(listensOn(process.pid, otherPort)).toBe(false);
      await new Promise<void>((r) => server.close(() => r()));
      expect(listensOn(process.pid, port)).toBe(false);
    } finally {
      other.kill('SIGKILL');
      if (server.listening) server.close();
    }
    await eventually('the other process to be gone', () => other.exitCode !== null || other.signalCode !== null);
    // a process that is gone holds nothing (its /proc entry is gone with it)
    expect(listensOn(other.pid!, otherPort)).toBe(false);
  });

  it('a node told to use a taken port is not taken for the stranger that answers there', async () => {
    const { server, port } = await stranger();
    const dataDir = mkdtempSync(join(tmpdir(), 'child-port-'));
    try {
      await expect(spawnNode({ DATA_DIR: dataDir }, { port })).rejects.toThrow(/found its port taken/);
    } finally {
      server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('untilListening waits for the process itself to serve, and ends it when only a stranger answers', async () => {
    const { server, port } = await stranger();
    const answers = async () => (await fetch(`http://127.0.0.1:${port}/`)).status === 200;
    // a process that never binds the port, while the stranger answers on it: not served, then killed
    const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await expect(untilListening('idle', idle, port, answers, { timeoutMs: 1_000, everyMs: 50 })).rejects.toThrow(
        `idle did not serve on port ${port} within 1 s`,
      );
      await eventually('the idle process to be killed', () => idle.signalCode === 'SIGKILL');
    } finally {
      idle.kill('SIGKILL');
    }
    // a process that exits first: what it printed comes with the error
    let out = '';
    const dying = spawn(process.execPath, ['-e', 'console.error("boom: EADDRINUSE"); process.exit(3)'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    dying.stderr!.on('data', (d: Buffer) => (out += d));
    await eventually('the dying process to exit', () => dying.exitCode !== null);
    const err = await untilListening('dying', dying, port, answers, { output: () => out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExitedBeforeListening);
    expect((err as ExitedBeforeListening).message).toMatch(/^dying exited \(3\) before it served: boom: EADDRINUSE/);
    expect((err as ExitedBeforeListening).output).toContain('EADDRINUSE');
    server.close();
    // the process that holds the port and answers there: served
    const own = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`], {
      stdio: 'ignore',
    });
    try {
      await untilListening('own', own, port, answers, { timeoutMs: 30_000 });
      expect(listensOn(own.pid!, port)).toBe(true);
    } finally {
      own.kill('SIGKILL');
    }
  });
});
