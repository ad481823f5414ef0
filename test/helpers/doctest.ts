/**
 * The doc-test runner: the shell and TypeScript blocks of the README's and docs' quick starts, run as
 * written against a service started on a fresh data dir, so that a quick start that stops working fails
 * the build.
 *
 * Which blocks: every ```sh / ```bash / ```ts block under a heading that says "Quick start" or "Runnable
 * example" (up to the next heading of the same or a higher level). A block whose language is none of those
 * is an error: a quick start shows what to run, and what it shows runs here.
 *
 * How: one bash script per document, run in a network namespace of its own (`unshare -rn`: user and net
 * namespaces, no privileges needed), so the blocks keep their literal `localhost:3000` and `:4242` without
 * meeting anything else on the machine, and nothing outside 127.0.0.1 is reachable (a host that does not
 * resolve fails the block). Shell blocks run in that script's one shell, in the repository (variables
 * carry from block to block, as in a terminal), under `set -eo pipefail`; TypeScript blocks are written to
 * a temporary directory (resolving this repository's packages) and run with `node`. HOME, DATA_DIR and a
 * working directory are fresh, and no PAYMENTS_* variable is inherited.
 *
 * What a block needs that a reader does by hand is said in an HTML comment on the line before the fence,
 * `<!-- doctest: key, key=value, key="value with spaces", key='value with "quotes"' -->`:
 *   service                the block starts the service: run in the background, ready when its output says
 *                          the broker started; its output is the mail log (no SMTP_URL: codes are logged)
 *   needs=service|merchant the test starts `npm start` itself (service-env="K=V …" adds settings), and for
 *                          `merchant` also registers a sandbox merchant with the CLI and exports its
 *                          PAYMENTS_API_KEY / PAYMENTS_WEBHOOK_SECRET, as the README's quick start does
 *   stdin=email-code       the block's standard input is the next verification code, once it is mailed
 *   background             run in the background (another terminal); ready="<regex>" waits for its output
 *   expect="<regex>"       its output must match (background blocks: by the end of the document); repeatable
 *   file=<name>            a TypeScript block's file name (default block<N>.ts)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface DocBlock {
  /** 1-based line of the opening fence */
  line: number;
  lang: string;
  code: string;
  heading: string;
  annotations: Map<string, string[]>;
}

const QUICK_START = /quick start|runnable example/i;
const RUNNABLE = new Set(['sh', 'bash', 'ts', 'typescript']);
const KNOWN = new Set(['service', 'needs', 'service-env', 'stdin', 'background', 'ready', 'expect', 'file']);

function parseAnnotation(text: string, where: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /\s*([a-z-]+)(?:=("([^"]*)"|'([^']*)'|[^,\s]+))?\s*(?:,|$)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < text.length && (m = re.exec(text))) {
    if (!KNOWN.has(m[1])) throw new Error(`${where}: unknown doctest annotation "${m[1]}"`);
    const value = m[3] ?? m[4] ?? m[2] ?? '';
    out.set(m[1], [...(out.get(m[1]) ?? []), value]);
    at = re.lastIndex;
  }
  if (text.slice(at).trim()) throw new Error(`${where}: cannot read doctest annotation "${text}"`);
  return out;
}

/** The quick-start blocks of a markdown document, with their annotations. */
export function quickStartBlocks(markdown: string, name = 'document'): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  const headings: { level: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const h = /^(#{1,6})\s+(.*)$/.exec(lines[i]);
    if (h) {
      while (headings.length && headings[headings.length - 1].level >= h[1].length) headings.pop();
      headings.push({ level: h[1].length, text: h[2] });
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    i = end;
    const section = headings.find((x) => QUICK_START.test(x.text));
    if (!section) continue;
    const where = `${name}:${start + 1}`;
    if (!RUNNABLE.has(fence[1])) throw new Error(`${where}: a quick-start block must be sh, bash or ts to be tested (is "${fence[1]}")`);
    const code = lines.slice(start + 1, end).join('\n');
    // the blocks run in this checkout: reinstalling its packages under the running test would break it
    if (/\bnpm (ci|install|i)\b/.test(code))
      throw new Error(`${where}: a quick-start block must not install packages (say "after \`npm ci\`" in the text)`);
    const note = /^<!--\s*doctest:(.*)-->\s*$/.exec(lines[start - 1] ?? '');
    blocks.push({
      line: start + 1,
      lang: fence[1] === 'typescript' ? 'ts' : fence[1],
      code,
      heading: headings[headings.length - 1].text,
      annotations: note ? parseAnnotation(note[1].trim(), where) : new Map(),
    });
  }
  return blocks;
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const one = (b: DocBlock, key: string) => b.annotations.get(key)?.[0];

/** The bash script that runs one document's blocks in order; `work` is its scratch directory. */
export function doctestScript(blocks: DocBlock[], repo: string, work: string): string {
  const needs = new Set(blocks.flatMap((b) => b.annotations.get('needs') ?? []));
  const serviceEnv = blocks.flatMap((b) => b.annotations.get('service-env') ?? []).join(' ');
  const out: string[] = [
    'set -eo pipefail',
    'ip link set lo up',
    `W=${q(work)}`,
    `cd ${q(repo)}`,
    'CODES=0',
    // polls a log for a regex (the reader's "wait until it says …")
    'doctest_wait() { for ((i = 0; i < $3 * 5; i++)); do grep -qE -- "$2" "$1" && return 0; sleep 0.2; done; echo "::doctest timed out waiting for /$2/ in $1"; tail -n 60 "$1"; return 1; }',
    // the next verification code the service mailed (to its log: no SMTP_URL)
    'doctest_code() { local n=$1; for ((i = 0; i < 300; i++)); do local c; c=$(grep -oE "verification code is [0-9]{6}" "$SERVICE_LOG" | sed -n "${n}p" | grep -oE "[0-9]{6}" || true); if [ -n "$c" ]; then echo "$c"; return 0; fi; sleep 0.2; done; echo "::doctest no verification code in the log" >&2; return 1; }',
    'CUR=',
    `trap 'rc=$?; if [ -n "$CUR" ]; then cat "$W/$CUR.log" 2>/dev/null; echo "::doctest $CUR failed with status $rc"; fi' EXIT`,
  ];
  if (needs.has('service') || needs.has('merchant')) {
    out.push(
      'echo "::doctest fixture service"',
      `( env ${serviceEnv} npm start ) > "$W/service.log" 2>&1 < /dev/null &`,
      'SERVICE_LOG="$W/service.log"',
      'doctest_wait "$SERVICE_LOG" "started successfully" 120',
    );
  }
  if (needs.has('merchant')) {
    out.push(
      'echo "::doctest fixture merchant"',
      'npm run operator -- trust-domain shop.example > /dev/null',
      'CODES=$((CODES + 1))',
      'npx payments register --email you@shop.example --name "Doc test shop" > "$W/merchant.log" 2>&1 < <(doctest_code $CODES) || { cat "$W/merchant.log"; exit 1; }',
      'eval "$(npx payments env)"',
    );
  }
  const late: string[] = [];
  blocks.forEach((b, i) => {
    const id = `b${i + 1}`;
    let command: string;
    if (b.lang === 'ts') {
      const file = one(b, 'file') ?? `block${i + 1}.ts`;
      writeFileSync(join(work, file), `${b.code}\n`);
      command = `node ${q(join(work, file))}`;
    } else command = `{\n${b.code}\n}`;
    let stdin = '< /dev/null';
    if (one(b, 'stdin') === 'email-code') {
      out.push('CODES=$((CODES + 1))');
      stdin = '< <(doctest_code $CODES)';
    } else if (b.annotations.has('stdin')) throw new Error(`line ${b.line}: stdin= takes email-code`);
    out.push(`echo "::doctest ${id} line ${b.line}"`);
    if (b.annotations.has('service') || b.annotations.has('background')) {
      const ready = b.annotations.has('service') ? 'started successfully' : one(b, 'ready');
      out.push(`( ${command} ) > "$W/${id}.log" 2>&1 ${stdin} &`);
      if (b.annotations.has('service')) out.push(`SERVICE_LOG="$W/${id}.log"`);
      if (ready) out.push(`CUR=${id}`, `doctest_wait "$W/${id}.log" ${q(ready)} 120`, 'CUR=');
      for (const e of b.annotations.get('expect') ?? []) late.push(`CUR=${id}`, `doctest_wait "$W/${id}.log" ${q(e)} 60`, 'CUR=');
    } else {
      out.push(`CUR=${id}`, `${command} > "$W/${id}.log" 2>&1 ${stdin}`);
      for (const e of b.annotations.get('expect') ?? [])
        out.push(`grep -qE -- ${q(e)} "$W/${id}.log" || { echo "::doctest expected /${e.replaceAll('"', '\\"')}/"; false; }`);
      out.push('CUR=', `cat "$W/${id}.log"`);
    }
  });
  out.push(...late, 'echo "::doctest ok"');
  return `${out.join('\n')}\n`;
}

export interface DoctestResult {
  ok: boolean;
  output: string;
}

/** Runs a document's quick-start blocks; the processes they started are stopped before it returns. */
export async function runDoctest(blocks: DocBlock[], opts: { timeoutMs?: number } = {}): Promise<DoctestResult> {
  const repo = resolve('.');
  const work = mkdtempSync(join(tmpdir(), 'doctest-'));
  const home = join(work, 'home');
  const dataDir = join(work, 'data');
  mkdirSync(home);
  // TypeScript blocks import this repository's packages (the SDK is a workspace)
  symlinkSync(join(repo, 'node_modules'), join(work, 'node_modules'));
  writeFileSync(join(work, 'package.json'), '{"type":"module"}\n');
  const script = doctestScript(blocks, repo, work);
  writeFileSync(join(work, 'doctest.sh'), script);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PAYMENTS_') && !/^(DATA_DIR|PORT|XDG_)/.test(k)) env[k] = v;
  Object.assign(env, { HOME: home, DATA_DIR: dataDir, LOG_LEVEL: 'info', NO_COLOR: '1', FORCE_COLOR: '0' });
  const child = spawn('unshare', ['-rn', 'bash', join(work, 'doctest.sh')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => {
    output += '\n::doctest timed out\n';
    process.kill(-child.pid!, 'SIGKILL');
  }, opts.timeoutMs ?? 240_000);
  const code = await new Promise<number | null>((r) => {
    child.on('error', (e) => {
      output += `\n::doctest cannot start unshare: ${e.message}\n`;
      r(null);
    });
    // not 'close': background blocks may still hold the pipes until the group is stopped below
    child.on('exit', r);
  });
  clearTimeout(timer);
  // background blocks and the service are in the script's process group
  try {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    /* already gone */
  }
  rmSync(work, { recursive: true, force: true });
  return { ok: code === 0 && /::doctest ok\s*$/.test(output), output };
}
