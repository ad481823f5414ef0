/**
 * Installing a packed tarball into a fresh project without the network: the project gets a lockfile
 * whose entries for the tarball's dependencies are this repository's own (same versions, same
 * integrity), so `npm ci --offline` takes every package from the npm cache that `npm ci` of this
 * repository filled. `npm install <tarball> --offline` would not do: resolving a range needs the
 * registry's metadata, which `npm ci` never fetches (it installs from the lockfile).
 */
import { readFileSync } from 'node:fs';

type LockEntry = Record<string, unknown> & { version: string; dependencies?: Record<string, string> };

/** The packages a dependency of `from` resolves to, as npm looks: `from`'s node_modules, then its parents'. */
function locate(lock: Record<string, LockEntry>, name: string, from: string): string {
  for (let at = from; ;) {
    const key = `${at ? `${at}/` : ''}node_modules/${name}`;
    if (lock[key]) return key;
    if (!at) throw new Error(`package-lock.json has no ${name} for ${from || 'the root'}`);
    const up = at.lastIndexOf('/node_modules/');
    at = up < 0 ? '' : at.slice(0, up);
  }
}

/**
 * A package-lock.json for a project that depends on `tarball` (a file name next to it) only.
 * `manifest` is the tarball's package.json; `workspace` is where the package lives in this repository
 * (its dependencies resolve from there, as they do here).
 */
export function lockForTarball(
  opts: { project: string; tarball: string; manifest: LockEntry & { name: string }; workspace: string; registry?: string },
  repoLockPath = 'package-lock.json',
): Record<string, unknown> {
  const lock = (JSON.parse(readFileSync(repoLockPath, 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const spec = `file:${opts.tarball}`;
  const { name, version, dependencies = {}, bin, engines, license } = opts.manifest;
  const packages: Record<string, unknown> = {
    '': { name: opts.project, version: '1.0.0', dependencies: { [name]: spec } },
    [`node_modules/${name}`]: { version, resolved: spec, dependencies, ...(bin ? { bin } : {}), ...(engines ? { engines } : {}), license },
  };
  const pending = Object.keys(dependencies).map((dep) => ({ dep, from: opts.workspace }));
  for (let next = pending.shift(); next; next = pending.shift()) {
    const key = locate(lock, next.dep, next.from);
    const target = `node_modules/${next.dep}`;
    const { dev: _dev, devOptional: _devOptional, optional: _optional, peer: _peer, ...entry } = lock[key];
    const seen = packages[target] as LockEntry | undefined;
    if (seen) {
      // one flat node_modules: two versions of a package would need nesting, which nothing here needs yet
      if (seen.version !== entry.version) throw new Error(`${next.dep}: ${seen.version} and ${entry.version} are both needed`);
      continue;
    }
    // where the tarball is (this repository's lockfile leaves it out: omit-lockfile-registry-resolved), so that
    // npm fetches it by URL and integrity from the cache and never needs the registry's metadata
    const registry = (opts.registry ?? 'https://registry.npmjs.org/').replace(/\/?$/, '/');
    packages[target] = { resolved: `${registry}${next.dep}/-/${next.dep.split('/').pop()}-${entry.version}.tgz`, ...entry };
    for (const dep of Object.keys(entry.dependencies ?? {})) pending.push({ dep, from: key });
  }
  return { name: opts.project, version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}
