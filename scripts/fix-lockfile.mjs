#!/usr/bin/env node
/**
 * The npm registry reachable here lacks some other-platform builds of native packages (@swc/core-darwin-*,
 * litesvm-win32-*, …), so `npm install` leaves them out of package-lock.json, and `npm ci` then refuses
 * the lockfile ("Missing: … from lock file"). This adds the entries a lockfile written elsewhere would
 * have: optional, with their os/cpu/libc, never fetched on a platform they do not match.
 * Runs as the root postinstall; `--check` only reports (exit 1 when entries are missing).
 */
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'netbsd', 'openbsd', 'aix'];
const CPU = {
  arm64: 'arm64',
  aarch64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  wasm32: 'wasm32',
  universal: null,
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpuToken = parts.find((p) => p in CPU);
  const libc = parts.some((p) => p.startsWith('musl')) ? 'musl' : parts.some((p) => p.startsWith('gnu')) ? 'glibc' : null;
  const out = {};
  if (os) out.os = [os];
  if (cpuToken && CPU[cpuToken]) out.cpu = [CPU[cpuToken]];
  if (os === 'linux' && libc) out.libc = [libc];
  return out;
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const added = [];
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform.os && !platform.cpu) continue; // not a platform build: a real omission, leave it to npm
    const version = String(spec).replace(/^[\^~=]/, '');
    if (!/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${name}`] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platform };
    added.push(`${name}@${version}`);
  }
}
if (process.argv.includes('--check')) {
  if (added.length) {
    console.error(`package-lock.json lacks ${added.length} platform packages: run node scripts/fix-lockfile.mjs`);
    process.exit(1);
  }
  process.exit(0);
}
if (added.length) {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`package-lock.json: added ${added.length} other-platform optional packages`);
}
