/**
 * Readers of single environment variables, each checked: a bad value is a ConfigError naming the variable
 * and what it must be (config/errors.ts), never a silent default.
 */
import { isIP } from 'node:net';
import { ConfigError } from './errors.ts';
import { parseDuration } from '../lib/core/duration.ts';

export type Env = Record<string, string | undefined>;

/** `<count>/<duration>`: so many events within a sliding window. */
export interface WindowThreshold {
  count: number;
  windowMs: number;
}

export function windowThreshold(env: Env, name: string, dflt: string): WindowThreshold {
  const raw = (env[name] || dflt).trim();
  const m = /^(\d{1,9})\/(\d{1,6}[smhd])$/.exec(raw);
  const windowMs = m ? parseDuration(m[2]) : null;
  if (!m || windowMs === null || windowMs <= 0) throw new ConfigError(name, env[name], `must be <count>/<duration>, e.g. ${dflt}`);
  return { count: Number(m[1]), windowMs };
}

export function duration(env: Env, name: string, dflt: string): number {
  const ms = parseDuration(env[name] || dflt);
  if (ms === null || ms <= 0) throw new ConfigError(name, env[name], `must be a duration such as ${dflt} (s, m, h or d)`);
  return ms;
}

export const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

export function int(env: Env, name: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(
      name,
      raw,
      max === Number.MAX_SAFE_INTEGER ? `must be a whole number >= ${min}` : `must be a whole number from ${min} to ${max}`,
    );
  return n;
}

/** 1/true/yes/on or 0/false/no/off; anything else is a mistake, not a silent false */
export function bool(env: Env, name: string): boolean {
  const v = env[name]?.trim() ?? '';
  if (v === '' || /^(0|false|no|off)$/i.test(v)) return false;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  throw new ConfigError(name, env[name], 'must be 1, true, yes or on (or 0, false, no, off)');
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], dflt: T): T {
  const v = (env[name] || dflt).trim() as T;
  if (!values.includes(v)) throw new ConfigError(name, env[name], `must be one of ${values.join(', ')}`);
  return v;
}

/** Whether `v` parses as a URL whose scheme matches. */
export function hasScheme(v: string, scheme: RegExp): boolean {
  try {
    return scheme.test(new URL(v).protocol);
  } catch {
    return false;
  }
}

/** An http(s) URL, or empty when unset. */
export function httpUrl(env: Env, name: string): string {
  const v = (env[name] ?? '').trim();
  if (!v) return '';
  if (!hasScheme(v, /^https?:$/)) throw new ConfigError(name, v, 'must be an http:// or https:// URL');
  return v;
}

/** A chain's JSON-RPC endpoint: http(s) or ws(s), or empty (the chain is not configured). */
export function rpcUrl(env: Env, name: string): string {
  const v = (env[name] ?? '').trim();
  if (!v) return '';
  if (!hasScheme(v, /^(https?|wss?):$/)) throw new ConfigError(name, v, 'must be an http(s):// or ws(s):// JSON-RPC URL');
  return v;
}

export function decimalOrNull(env: Env, name: string): string | null {
  const v = env[name]?.trim();
  if (!v) return null;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(name, env[name], 'must be a decimal number of token units, e.g. 1000 or 0.5');
  return v;
}

/** Comma-separated items, each checked by `valid`. */
export function checkedList(env: Env, name: string, valid: (item: string) => boolean, what: string): string[] {
  const items = list(env[name]);
  const bad = items.find((i) => !valid(i));
  if (bad !== undefined) throw new ConfigError(name, env[name], `must be a comma-separated list of ${what} ("${bad}" is not one)`);
  return items;
}

export const isCidr = (v: string) => {
  const [ip, bits, ...rest] = v.split('/');
  const family = isIP(ip);
  if (!family || rest.length) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
};
export const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** A token contract (Ethereum: 0x + 40 hex) or mint (Solana: base58 of 32 bytes), or empty. */
export function tokenAddress(env: Env, name: string, chain: 'ETHEREUM' | 'SOLANA'): string {
  const v = (env[name] ?? '').trim();
  if (!v) return '';
  const ok = chain === 'ETHEREUM' ? /^0x[0-9a-fA-F]{40}$/.test(v) : /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v);
  if (!ok)
    throw new ConfigError(
      name,
      v,
      chain === 'ETHEREUM' ? 'must be a contract address: 0x and 40 hex digits' : 'must be a mint address (base58)',
    );
  return v;
}

/** The interface to listen on: an IP address or a host name. */
export function host(env: Env): string {
  const v = (env.HOST || '0.0.0.0').trim();
  if (!isIP(v) && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(v))
    throw new ConfigError('HOST', env.HOST, 'must be an IP address (0.0.0.0, 127.0.0.1, ::) or a host name');
  return v;
}

/** A name without spaces or punctuation beyond . _ - (NAMESPACE, NODE_ID), or empty. */
export function word(env: Env, name: string): string {
  const v = (env[name] ?? '').trim();
  if (v && !/^[A-Za-z0-9._-]{1,100}$/.test(v)) throw new ConfigError(name, env[name], 'must be letters, digits, . _ or - (at most 100)');
  return v;
}

/** Empty (mail goes to the log), or smtp(s)://user:pass@host:port */
export function smtpUrl(env: Env): string {
  const v = (env.SMTP_URL ?? '').trim();
  if (!v) return '';
  if (!hasScheme(v, /^smtps?:$/))
    throw new ConfigError('SMTP_URL', v, 'must be smtp://user:pass@host:port or smtps://… (empty: emails go to the log)');
  return v;
}

/** The largest request body, as body-parser reads it: 64kb, 1mb, 500b. */
export function bodyLimit(env: Env): string {
  const v = (env.BODY_LIMIT || '64kb').trim();
  if (!/^\d{1,9}(b|kb|mb)?$/i.test(v)) throw new ConfigError('BODY_LIMIT', env.BODY_LIMIT, 'must be a size such as 64kb, 1mb or 500b');
  return v;
}

/** `<chain>:<network>:<token>=<decimal>` pairs, comma separated */
export function railAmounts(env: Env, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (env[name] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z]+:(?:testnet|mainnet):[A-Z]+)=(\d+(?:\.\d+)?)$/.exec(part);
    if (!m) throw new ConfigError(name, env[name], `must be <chain>:<network>:<token>=<token units>, comma separated ("${part}" is not)`);
    out[m[1]] = m[2];
  }
  return out;
}
