#!/usr/bin/env node
/**
 * `npm pack` / `npm publish` of the SDK (its prepack and postpack scripts). Plain JavaScript, so that it
 * runs on whatever Node runs npm.
 *
 * Inside this repository the package is TypeScript that Node 24 runs as it is: package.json's `exports`
 * and `bin` point at src/ and bin/, and every in-repo import of `@stablecoin-payments/sdk` meets the
 * sources. The packed package is JavaScript with .d.ts for Node 20 and later:
 *   prepack   builds dist/ (tsc -p tsconfig.build.json) and puts the published manifest in place: the
 *             source manifest with `publishConfig.exports` and `publishConfig.bin` as its `exports` and
 *             `bin` (the fields pnpm and yarn apply by themselves), without scripts nor devDependencies;
 *             the source manifest waits in .package.source.json
 *   postpack  puts the source manifest back (a prepack after an interrupted pack does it first too)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = `${root}package.json`;
const saved = `${root}.package.source.json`;

function restore() {
  if (existsSync(saved)) renameSync(saved, manifest);
}

function build() {
  rmSync(`${root}dist`, { recursive: true, force: true });
  // this workspace's TypeScript (5.x): the compiler that writes declaration files
  const tsc = createRequire(manifest).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (status ${r.status ?? r.signal})`);
}

/** The manifest of the packed package. */
export function publishedManifest(source) {
  const { publishConfig = {}, scripts: _scripts, devDependencies: _dev, ...rest } = source;
  const { exports, bin, ...config } = publishConfig;
  if (!exports || !bin) throw new Error('package.json: publishConfig.exports and publishConfig.bin say what the package publishes');
  return { ...rest, exports, bin, ...(Object.keys(config).length ? { publishConfig: config } : {}) };
}

const step = process.argv[2];
if (step === 'prepack') {
  restore();
  build();
  const source = readFileSync(manifest, 'utf8');
  writeFileSync(saved, source);
  writeFileSync(manifest, `${JSON.stringify(publishedManifest(JSON.parse(source)), null, 2)}\n`);
} else if (step === 'postpack') {
  restore();
} else {
  console.error('usage: node scripts/pack.mjs prepack|postpack');
  process.exitCode = 2;
}
