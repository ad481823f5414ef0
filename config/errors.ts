/**
 * A setting the service cannot start with: one line naming the variable, the value it has (secrets
 * masked) and what it must be, and exit status 78 (EX_CONFIG, sysexits.h) with no stack trace, so an
 * operator fixes the setting instead of reading a trace. `npm start`, the operator commands and the REPL
 * all stop this way.
 */

export const EX_CONFIG = 78;

/** Values never shown, whatever they are: keys, secrets, passwords, tokens, the seed. */
const SECRET_NAME = /(SECRET|PASSWORD|TOKEN|MNEMONIC|MASTER_KEY|API_KEY)$/;
/** URLs whose path or query may carry a provider key (RPC endpoints, rate APIs): origin only. */
const KEYED_URL = /_RPC_URL$|^RATES_HTTP_URL$|^ALERT_WEBHOOK_URL$|^ALERTMANAGER_URL$/;

/** What may be printed of a setting's value: secrets masked, credentials cut out of URLs, long values cut. */
export function shownValue(variable: string, value: string | undefined): string {
  if (value === undefined || value === '') return '(empty)';
  if (SECRET_NAME.test(variable)) return `(hidden, ${value.length} characters)`;
  let shown = value;
  const url = /^[a-z][a-z0-9+.-]*:\/\/[^\s]*$/i.test(value) ? safeUrl(value) : null;
  if (url !== null) shown = KEYED_URL.test(variable) ? `${url.origin}/…` : url.text;
  // control characters would break the one line (or a terminal)
  shown = [...shown].map((ch) => (ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127 ? '?' : ch)).join('');
  return JSON.stringify(shown.length > 120 ? `${shown.slice(0, 117)}...` : shown);
}

/** A URL with its password (and query) replaced; null when it does not parse. */
function safeUrl(value: string): { origin: string; text: string } | null {
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    if (u.search) u.search = '?…';
    const origin = u.origin === 'null' ? `${u.protocol}//${u.host}` : u.origin;
    return { origin, text: u.toString() };
  } catch {
    return null;
  }
}

export class ConfigError extends Error {
  readonly variable: string;
  readonly expected: string;
  /**
   * `expected` says what the value must be, as the end of a sentence starting with the variable:
   * "must be an integer from 1 to 65535".
   */
  constructor(variable: string, value: string | undefined, expected: string) {
    super(`${variable}=${shownValue(variable, value)}: ${expected}`);
    this.name = 'ConfigError';
    this.variable = variable;
    this.expected = expected;
  }
}

/** Prints a configuration error as its one line and exits 78; anything else is rethrown. */
export function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`configuration error: ${e.message}\n`);
    process.exit(EX_CONFIG);
  }
  throw e;
}
