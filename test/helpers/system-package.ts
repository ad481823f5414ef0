/**
 * System binaries tests need (Debian packages, like nats-server in .ci/run): found on PATH, or installed
 * with apt-get when missing and running as root; otherwise a clear error saying what to install.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function ensureBinary(names: string[], aptPackage: string): string {
  const dirs = ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/bin'];
  const find = () => names.flatMap((n) => dirs.map((d) => `${d}/${n}`)).find(existsSync);
  let bin = find();
  if (!bin && process.getuid?.() === 0) {
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', aptPackage], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
    bin = find();
  }
  if (!bin) throw new Error(`${names[0]} is missing: apt-get install ${aptPackage}`);
  return bin;
}
