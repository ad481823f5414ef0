/**
 * A server a test started goes with the test process, however that goes: killed outright (as jest kills a
 * worker that does not exit in time), the process's exit hooks never run, and the reaper stops the server
 * and removes its directory; a server that stopped first leaves its reaper nothing to do.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../helpers/wait.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** a test process that starts a long-lived "server" under the reaper and prints its pid */
function testProcess(dir: string) {
  const code = `import { spawn } from 'node:child_process';
import { reapWith } from './test/helpers/reaper.ts';
const server = spawn('sleep', ['300'], { stdio: 'ignore' });
reapWith(server, ${JSON.stringify(dir)});
console.log(server.pid);
setInterval(() => {}, 1000);`;
  return spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
}

describe('the reaper', () => {
  it('stops the server and removes its directory when the test process is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reaper-'));
    writeFileSync(join(dir, 'data'), 'x');
    const parent = testProcess(dir);
    const server = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d: Buffer) => r(d.toString()))));
    expect(alive(server)).toBe(true);
    parent.kill('SIGKILL');
    await eventually('the server to be stopped and its directory removed', () => !alive(server) && !existsSync(dir), 10_000, 100);
  });

  it('does nothing once the server is gone first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reaper-'));
    const parent = testProcess(dir);
    const server = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d: Buffer) => r(d.toString()))));
    process.kill(server, 'SIGKILL');
    await eventually('the server to be gone', () => !alive(server), 10_000, 100);
    // its reaper saw it go and left: killing the test process now removes nothing
    await new Promise((r) => setTimeout(r, 1500));
    parent.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(dir)).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });
});
