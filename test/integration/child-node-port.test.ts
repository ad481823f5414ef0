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
import { listensOn } from '../helpers/ports.ts';
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
});
