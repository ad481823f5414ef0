/**
 * Where the CLI keeps credentials: $PAYMENTS_CONFIG, or $XDG_CONFIG_HOME/payments/config.json, or
 * ~/.config/payments/config.json; the directory is 0700 and the file 0600 (checked and fixed on every
 * write). A profile holds the base URL, the API key and, when known, the webhook secret that `listen`
 * signs with. PAYMENTS_API_KEY, PAYMENTS_BASE_URL and PAYMENTS_WEBHOOK_SECRET override the profile.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Profile {
  base_url?: string;
  api_key?: string;
  webhook_secret?: string;
  merchant_id?: string;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_BASE_URL = 'http://localhost:3000';

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PAYMENTS_CONFIG) return env.PAYMENTS_CONFIG;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'payments', 'config.json');
}

function readConfig(path: string): ConfigFile {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as ConfigFile;
    return { profiles: parsed.profiles ?? {} };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
}

export function loadProfile(name: string, env: NodeJS.ProcessEnv = process.env): Profile {
  const stored = readConfig(configPath(env)).profiles[name] ?? {};
  return {
    ...stored,
    ...(env.PAYMENTS_BASE_URL ? { base_url: env.PAYMENTS_BASE_URL } : {}),
    ...(env.PAYMENTS_API_KEY ? { api_key: env.PAYMENTS_API_KEY } : {}),
    ...(env.PAYMENTS_WEBHOOK_SECRET ? { webhook_secret: env.PAYMENTS_WEBHOOK_SECRET } : {}),
  };
}

/** Merges `update` into the named profile; written to a 0600 temp file, then renamed into place. */
export function saveProfile(name: string, update: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const path = configPath(env);
  const config = readConfig(path);
  config.profiles[name] = { ...config.profiles[name], ...update };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}
