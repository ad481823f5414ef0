/**
 * The Chromium of the browser tests, so that `npm ci` alone is enough: the build inside the
 * @sparticuz/chromium npm package (unpacked into the temp dir on first use, ~5 s), else Debian's
 * /usr/bin/chromium; CHROMIUM_PATH overrides both.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

/** What the browser tests launch with (no network chatter: this machine's network is closed). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-gpu',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

// the package is ESM with top-level setup code: ask a child Node process rather than load it into jest
const UNPACK = "const { default: c } = await import('@sparticuz/chromium'); process.stdout.write(await c.executablePath());";

export async function chromiumPath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', UNPACK], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    if (stdout && existsSync(stdout)) return stdout;
  } catch {
    // not installed or not unpackable here: try the system's
  }
  const system = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
  if (system) return system;
  throw new Error('no Chromium for the browser tests: run `npm ci` (it installs @sparticuz/chromium) or `apt-get install chromium`');
}
