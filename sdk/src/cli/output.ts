/** Output for people (tables, one line per event) and for scripts (--json), and the exit codes. */
import { PaymentsError, NetworkError } from '../errors.ts';

/** What a script can test. */
export const EXIT = {
  OK: 0,
  /** an unexpected failure */
  ERROR: 1,
  /** bad flags or arguments, or something the command cannot do */
  USAGE: 2,
  /** the API refused the request as bad input (code 3) */
  BAD_REQUEST: 3,
  /** no API key, or the API refused the credentials (code 7) */
  AUTH: 4,
  /** not found (code 2) */
  NOT_FOUND: 5,
  /** conflict (code 5), e.g. an Idempotency-Key reused with another body */
  CONFLICT: 6,
  /** rate limited (code 4) */
  RATE_LIMITED: 7,
  /** the service failed (code 1, 5xx) or could not be reached */
  UNAVAILABLE: 8,
} as const;

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.USAGE) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  if (e instanceof NetworkError) return EXIT.UNAVAILABLE;
  if (e instanceof PaymentsError) {
    switch (e.code) {
      case 3:
        return EXIT.BAD_REQUEST;
      case 7:
        return EXIT.AUTH;
      case 2:
        return EXIT.NOT_FOUND;
      case 5:
        return EXIT.CONFLICT;
      case 4:
        return EXIT.RATE_LIMITED;
      default:
        return e.status >= 500 || e.status === 0 ? EXIT.UNAVAILABLE : EXIT.BAD_REQUEST;
    }
  }
  return EXIT.ERROR;
}

type Row = Record<string, unknown>;

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A plain aligned table (no colours, so it pastes and greps well). */
export function table(rows: Row[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const header = columns.map((c) => c.toUpperCase());
  const body = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...body.map(line)].join('\n');
}

/** One object as "key  value" lines. */
export function details(obj: Row, keys?: string[]): string {
  const ks = keys ?? Object.keys(obj);
  const width = Math.max(...ks.map((k) => k.length));
  return ks
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${k.padEnd(width)}  ${cell(obj[k])}`)
    .join('\n');
}

export interface Out {
  json: boolean;
  /** prints data: as JSON with --json, otherwise as the human form */
  print(data: unknown, human: () => string): void;
  /** a status line for people (stderr, so stdout stays clean for --json and pipes) */
  info(text: string): void;
}

export function output(json: boolean, stdout: NodeJS.WritableStream = process.stdout, stderr: NodeJS.WritableStream = process.stderr): Out {
  return {
    json,
    print(data, human) {
      stdout.write(`${json ? JSON.stringify(data) : human()}\n`);
    },
    info(text) {
      stderr.write(`${text}\n`);
    },
  };
}
