/**
 * What every command of the CLI reads: the global options (--json, --profile, --base-url), the profile
 * and the client they give, and the option parsers commands share.
 */
import type { Command } from 'commander';
import { PaymentsClient } from '../client.ts';
import { DEFAULT_BASE_URL, loadProfile, type Profile } from './profile.ts';
import { CliError, EXIT, output, type Out } from './output.ts';

export interface Globals {
  json?: boolean;
  profile: string;
  baseUrl?: string;
}

export interface Cli {
  globals(): Globals;
  out(): Out;
  profile(): Profile;
  baseUrl(): string;
  /** a client with the profile's API key; none is a usage error naming where a key comes from */
  client(): PaymentsClient;
}

/** Read when a command runs (after commander parsed the global options), never when it is declared. */
export function cliContext(program: Command): Cli {
  const globals = (): Globals => program.opts<Globals>();
  const profile = (): Profile => loadProfile(globals().profile);
  const baseUrl = () => globals().baseUrl ?? profile().base_url ?? DEFAULT_BASE_URL;
  return {
    globals,
    out: () => output(Boolean(globals().json)),
    profile,
    baseUrl,
    client: () => {
      const key = profile().api_key;
      if (!key) throw new CliError('no API key: set PAYMENTS_API_KEY or run `payments login` (or `payments register`)', EXIT.AUTH);
      return new PaymentsClient({ baseUrl: baseUrl(), apiKey: key });
    },
  };
}

export function num(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new CliError(`not a number: ${v}`);
  return n;
}

export function json(v: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(v) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    /* below */
  }
  throw new CliError('--metadata must be a JSON object');
}

/** After a full page, for people: the flag that gets the next one. */
export function moreHint(o: Out, nextCursor: string | null | undefined): void {
  if (!o.json && nextCursor) o.info(`more: --cursor ${nextCursor}`);
}
