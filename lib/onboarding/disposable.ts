/**
 * Disposable-mail providers, from the maintained `disposable-email-domains` list (exact and wildcard).
 *
 * The list (~120,000 domains) is loaded on the first check, not at start-up (a node that registers nobody
 * never holds it), and kept as one sorted newline-joined string searched by bisection: ~2 MB instead of
 * ~7 MB for a Set of as many strings.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

interface Lists {
  /** the exact domains, sorted, each followed by a newline */
  text: string;
  /** where each domain starts in `text` */
  starts: Uint32Array;
  wildcard: string[];
}

let lists: Promise<Lists> | null = null;

/** a file of the package, read and parsed here (an imported JSON module would stay in the module cache) */
async function readList(file: string, root = process.env.APP_ROOT || process.cwd()): Promise<string[]> {
  const path = createRequire(resolve(root, 'package.json')).resolve(`disposable-email-domains/${file}`);
  return (JSON.parse(await readFile(path, 'utf8')) as string[]).map((d) => d.toLowerCase());
}

async function load(): Promise<Lists> {
  const [domains, wildcard] = await Promise.all([readList('index.json'), readList('wildcard.json')]);
  const sorted = [...new Set(domains)].sort();
  const starts = new Uint32Array(sorted.length);
  let at = 0;
  sorted.forEach((d, i) => {
    starts[i] = at;
    at += d.length + 1;
  });
  return { text: `${sorted.join('\n')}\n`, starts, wildcard };
}

/** `domain` is one of the sorted domains (bisection over the joined string) */
function listed({ text, starts }: Lists, domain: string): boolean {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = text.slice(starts[mid], text.indexOf('\n', starts[mid]));
    if (at === domain) return true;
    if (at < domain) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

export async function isDisposableEmail(email: string): Promise<boolean> {
  const domain = email.trim().toLowerCase().split('@').pop() ?? '';
  const l = await (lists ??= load().catch((e) => {
    lists = null; // a failed load is tried again by the next check
    throw e;
  }));
  if (listed(l, domain)) return true;
  return l.wildcard.some((w) => domain === w || domain.endsWith(`.${w}`));
}
