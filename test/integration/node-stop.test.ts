/**
 * A stopped node holds nothing open in its process: a program (or a jest worker) that stops one exits at
 * once. moleculer-web used to leave a 500 ms debounce timer behind it, armed by the $services.changed of
 * the node's own stop, and jest force-killed the worker that ran the file past its exit deadline.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** what keeps a process alive right after it stopped a node it started (process.getActiveResourcesInfo) */
function leftAfterStop(): Promise<string[]> {
  const helper = join(process.cwd(), 'test', 'helpers', 'node.ts');
  const script = `
    import { startTestNode, http } from ${JSON.stringify(helper)};
    const node = await startTestNode();
    await http(node.url, 'GET', '/v1/payment_methods');
    await node.stop();
    setImmediate(() => console.log('LEFT ' + JSON.stringify(process.getActiveResourcesInfo())));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      const m = /^LEFT (.*)$/m.exec(out);
      if (code !== 0 || !m) return reject(new Error(`the node's program exited ${code}: ${out}`));
      resolve(JSON.parse(m[1]) as string[]);
    }),
  );
}

describe('a stopped node', () => {
  it('leaves no timer holding its process open', async () => {
    const left = await leftAfterStop();
    // the client's kept-alive socket and the server's handle may still be closing; a timer would keep the process up
    expect(left).not.toContain('Timeout');
    expect(left).not.toContain('Immediate');
  }, 60_000);
});
