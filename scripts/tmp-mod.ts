import { readFileSync } from 'node:fs';
const mods = process.argv.slice(2);
const st = () => { const s = readFileSync('/proc/self/status','utf8'); const g=(k: string)=>Number(new RegExp(k+':\\s+(\\d+)').exec(s)![1])>>10; return [g('RssAnon'), g('RssFile')]; };
const m0 = () => { globalThis.gc!(); globalThis.gc!(); const m = process.memoryUsage(); return [m.rss >> 20, m.heapUsed / 1048576, m.heapTotal/1048576, ...st()]; };
let a = m0();
console.log('base', a.map(x=>x.toFixed(0)).join(' '));
for (const m of mods) {
  await import(m.startsWith('.') ? new URL('../' + m, import.meta.url).href : m);
  const b = m0();
  console.log(m, 'rss/heapUsed/heapTotal/anon/file +', b.map((x,i)=>(x-a[i]).toFixed(1)).join(' '));
  a = b;
}
