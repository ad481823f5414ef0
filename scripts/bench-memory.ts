/**
 * Benchmark of the memory of one node (issue 22: ≤ 150 MB idle after start, ≤ 200 MB after 10,000
 * sessions and 10,000 spends): `node index.ts` as `npm start` runs it, on a fresh data dir (SQLite, every
 * service), over HTTP (./memory-load.ts). Resident set size of the process:
 *  - a bare node process in the same run (the floor: the runtime alone);
 *  - a first start on an empty compile cache (npm start's NODE_COMPILE_CACHE), which fills it; every
 *    measurement after is of a second start, as every start after the first one is;
 *  - the service when it answers, and after `--settle` seconds idle;
 *  - after 10,000 sessions (`POST /v1/payment_sessions`) and 10,000 recorded spend attempts over ten
 *    funded agent wallets with a policy (`POST /v1/agent-wallets/{id}/spend-attempts`), 20 clients each;
 *  - after `--settle` and twice `--settle` seconds idle again.
 * Usage: npm run bench:memory -- [--sessions 10000 --spends 10000 --settle 60]
 */
import { loadavg } from 'node:os';
import { arg } from './bench-lib.ts';
import { measureMemory, type Reading } from './memory-load.ts';

const sessions = arg('sessions', 10_000);
const spends = arg('spends', 10_000);
const settle = arg('settle', 60);

console.log(`bench:memory, node ${process.version}, load average at start ${loadavg()[0].toFixed(1)}`);
const m = await measureMemory({ sessions, spends, settle, cold: true });
const rows: Array<[string, Reading]> = [
  ['bare node process (baseline)', { mb: m.bare, lazyMb: 0 }],
  ['service, first start (compile cache empty), when it answers', m.cold!],
  ['service, when it first answers', m.answers],
  [`service, idle ${settle} s after start`, m.idleStart],
  [`service, after ${sessions} sessions (${m.sessionErrors} errors) and ${spends} spends (${m.spendErrors} errors)`, m.rightAfter],
  [`service, idle ${settle} s after that`, m.idleAfter[0]],
  [`service, idle ${2 * settle} s after that`, m.idleAfter[1]],
];
console.log('\n| what | RSS | × bare node | of it freed lazily (MADV_FREE) |\n|---|---|---|---|');
for (const [what, r] of rows)
  console.log(`| ${what} | ${r.mb.toFixed(0)} MB | ${(r.mb / m.bare).toFixed(2)} | ${r.lazyMb.toFixed(0)} MB |`);
console.log(`\nload average at the end ${loadavg()[0].toFixed(1)}`);
