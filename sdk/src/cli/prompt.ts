/** Reading answers from stdin: a line at a time, and without echo when it is a secret typed at a terminal. */
import { createInterface } from 'node:readline';

let lines: AsyncIterator<string> | null = null;

function lineReader(): AsyncIterator<string> {
  lines ??= createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
  return lines;
}

/** Asks on stderr and reads one line; `secret` turns echo off on a terminal. */
export async function ask(question: string, opts: { secret?: boolean } = {}): Promise<string> {
  process.stderr.write(question);
  if (opts.secret && process.stdin.isTTY) {
    return new Promise((resolve, reject) => {
      let value = '';
      process.stdin.setRawMode(true);
      process.stdin.resume();
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            cleanup();
            process.stderr.write('\n');
            resolve(value);
            return;
          }
          if (ch === '\u0003') {
            cleanup();
            reject(new Error('cancelled'));
            return;
          }
          if (ch === '\u007f') value = value.slice(0, -1);
          else value += ch;
        }
      };
      const cleanup = () => {
        process.stdin.off('data', onData);
        process.stdin.setRawMode(false);
        process.stdin.pause();
      };
      process.stdin.on('data', onData);
    });
  }
  const next = await lineReader().next();
  if (next.done) throw new Error('no answer on standard input');
  return next.value.trim();
}

/** Lets the process exit once prompts are done. */
export function closePrompts(): void {
  if (lines) void lines.return?.();
  lines = null;
  process.stdin.unref?.();
}
