/**
 * Schema-driven request generation for the fuzz test: from each operation of openapi.json it builds
 * valid-looking requests and then breaks them in one way each (wrong types, missing and unknown fields,
 * extreme numbers, long and odd unicode strings, deep nesting, bad bodies and encodings, huge headers,
 * bad path and query params). Deterministic: everything is drawn from a seeded PRNG.
 */
import { deflateSync, gzipSync } from 'node:zlib';

type Schema = Record<string, any>;

/** mulberry32: small, fast, seeded; enough for test-case choice. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  pathParams: string[];
  query: { name: string; schema: Schema }[];
  headers: string[];
  body: Schema | null;
  /** the operation declares a 503 (a dependency that may genuinely be unavailable) */
  may503: boolean;
}

export function operations(doc: Schema): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = (op.parameters ?? []).map((p: Schema) => (p.$ref ? resolve(doc, p) : p));
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        pathParams: params.filter((p: Schema) => p.in === 'path').map((p: Schema) => p.name),
        query: params.filter((p: Schema) => p.in === 'query').map((p: Schema) => ({ name: p.name, schema: p.schema ?? {} })),
        headers: params.filter((p: Schema) => p.in === 'header').map((p: Schema) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
        may503: Boolean(op.responses?.['503']),
      });
    }
  }
  return ops;
}

export function resolve(doc: Schema, s: Schema): Schema {
  let cur = s;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 20; i++) {
    cur = cur.$ref
      .slice(2)
      .split('/')
      .reduce((o: Schema, k: string) => o?.[k], doc);
  }
  if (cur?.allOf) return Object.assign({}, ...cur.allOf.map((x: Schema) => resolve(doc, x)), { ...cur, allOf: undefined });
  return cur ?? {};
}

/** A placeholder string swapped for raw JSON text after serialization (numbers JSON.stringify cannot write). */
const RAW = '\u0001RAW:';
export const raw = (text: string) => `${RAW}${text}\u0001`;
export function serialize(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0001RAW:(.*?)\\u0001"/g, (_m, t: string) => JSON.parse(`"${t}"`));
}

export const EXTREME_NUMBERS = [
  '-1',
  '0',
  '-0',
  '1e308',
  '-1e308',
  '1e309',
  '1e-400',
  '9007199254740993',
  '0.1234567890123456789',
  '123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890',
  '1.5',
  '1E+2',
  '-9007199254740993',
  `0.${'0'.repeat(400)}1`,
  '115792089237316195423570985008687907853269984665640564039457584007913129639936',
];

export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'NaN',
  '-1',
  '1e308',
  '../../etc/passwd',
  "'; DROP TABLE x; --",
  '\ud800',
  '\udfff\ud800',
  '😀'.repeat(50),
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'e\u0301\u0301\u0301',
  '\uffff\ufffe',
  '%00%ZZ',
  '<script>alert(1)</script>',
  'a'.repeat(5_000),
  'x'.repeat(70_000),
  '\t\r\n',
  'ethereum:testnet:USDC',
  '{"$gt":""}',
];

/** Nested text built directly (JSON.stringify of deep values would itself overflow the stack). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export interface Known {
  ids: Record<string, string[]>;
  emailSeq: { n: number };
  /** hand-written valid bodies by "METHOD /path", so that broken variants get past the first checks */
  templates?: Record<string, unknown>;
}

/** A value that satisfies the schema as far as a simple generator can (examples, enums, bounds). */
export function validValue(doc: Schema, schema: Schema, rng: Rng, known: Known, name = '', depth = 0): unknown {
  const s = resolve(doc, schema);
  if (depth > 6) return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return rng.pick(s.enum);
  if (Array.isArray(s.examples) && s.examples.length && rng.chance(0.8)) return rng.pick(s.examples);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : (s.type ?? (s.properties ? 'object' : 'string'));
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const req = new Set<string>(s.required ?? []);
      for (const [k, v] of Object.entries<Schema>(s.properties ?? {})) {
        if (req.has(k) || rng.chance(0.5)) out[k] = validValue(doc, v, rng, known, k, depth + 1);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(s.minItems ?? 0, rng.int(3));
      return Array.from({ length: n }, () => validValue(doc, s.items ?? {}, rng, known, name, depth + 1));
    }
    case 'integer': {
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      const hi = s.maximum ?? lo + 10;
      return lo + rng.int(Math.max(1, Math.min(hi - lo + 1, 20)));
    }
    case 'number':
      return rng.pick([1, 2.5, 3, 10]);
    case 'boolean':
      return rng.chance(0.5);
    default: {
      const idKey = name.endsWith('_id') ? name : '';
      if (idKey && known.ids[idKey]?.length) return rng.pick(known.ids[idKey]);
      if (s.format === 'email') return `fuzz${known.emailSeq.n++}@trusted.test`;
      if (s.format === 'uri' || /url$/.test(name)) return 'http://127.0.0.1:9/hook';
      if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (s.pattern === '^[0-9]+$' || /subunits$/.test(name)) return '1000000';
      if (/^chain$/.test(name)) return rng.pick(['ethereum', 'solana']);
      if (/^token$|currency/.test(name)) return rng.pick(['USDC', 'ETH', 'SOL']);
      const len = Math.max(s.minLength ?? 1, 4);
      return 'fuzz'.padEnd(len, 'z').slice(0, s.maxLength ?? len);
    }
  }
}

/** Paths to every value inside a JSON value (for picking where to mutate). */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (v && typeof v === 'object') {
    for (const [k, c] of Object.entries(v)) paths(c, [...at, Array.isArray(v) ? Number(k) : k], out);
  }
  return out;
}

function setAt(root: unknown, at: (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of at.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  cur[at[at.length - 1]] = value;
  return copy;
}

export interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  auth: 'valid' | 'bearer' | 'none' | 'bad-key' | 'bad-bearer';
}

const WRONG_TYPES: unknown[] = [null, true, false, 0, -1, 'str', [], {}, [1, 'a'], { x: 1 }];
const BAD_PATH_VALUES = [
  'does_not_exist',
  '0',
  '-1',
  'null',
  'a'.repeat(10_000),
  '%ZZ',
  '%00',
  '%2e%2e%2f%2e%2e',
  '..',
  '%F0%9F%98%80',
  '%C0%AF',
  '%ED%A0%80',
  'ps_' + 'f'.repeat(40),
  '__proto__',
  'constructor',
  '%20',
  '%0A',
  'é',
  '\u00ff\u00fe',
  "'or'1'='1",
  '*',
  '%25',
  '%',
];
const BAD_QUERY_VALUES = [
  '-1',
  '0',
  '1e309',
  'abc',
  '',
  '%ZZ',
  '9999999999999999999999',
  'a'.repeat(5_000),
  '%00',
  '[]',
  '{}',
  'true',
  '%F0%9F%98%80',
  '__proto__',
];

/** One fuzz request for an operation; `kind` picks the family of breakage. */
export function buildRequest(doc: Schema, op: Operation, kind: string, rng: Rng, known: Known): FuzzRequest {
  const pathValues: Record<string, string> = {};
  for (const p of op.pathParams) {
    const ids = known.ids[p];
    pathValues[p] = ids?.length && rng.chance(0.7) ? rng.pick(ids) : encodeURIComponent(`fuzz_${rng.int(1e6)}`);
  }
  const query: string[] = [];
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  let label = kind;
  const template = known.templates?.[`${op.method} ${op.path}`];
  const valid: unknown =
    template !== undefined && rng.chance(0.75) ? structuredClone(template) : op.body ? validValue(doc, op.body, rng, known) : undefined;
  if (op.headers.includes('Idempotency-Key') && rng.chance(0.5)) headers['Idempotency-Key'] = `fuzz-${rng.int(1e9)}`;
  const jsonBody = (text: string) => {
    body = Buffer.from(text);
    headers['Content-Type'] = 'application/json';
  };
  const mutateAt = (value: unknown) => {
    const all = paths(valid);
    const at = rng.pick(all);
    label += ` at /${at.join('/')}`;
    return setAt(valid, at, value);
  };

  switch (kind) {
    case 'valid':
      if (op.body) jsonBody(serialize(valid));
      for (const q of op.query)
        if (rng.chance(0.4)) query.push(`${q.name}=${encodeURIComponent(String(validValue(doc, q.schema, rng, known, q.name)))}`);
      break;
    case 'wrong-type': {
      const v = rng.pick(WRONG_TYPES);
      label += ` ${JSON.stringify(v)}`;
      jsonBody(serialize(op.body ? mutateAt(v) : v));
      break;
    }
    case 'missing-required': {
      const s = op.body ? resolve(doc, op.body) : {};
      const req: string[] = s.required ?? [];
      if (req.length && valid && typeof valid === 'object') {
        const k = rng.pick(req);
        label += ` ${k}`;
        const copy = { ...(valid as Record<string, unknown>) };
        delete copy[k];
        jsonBody(serialize(copy));
      } else jsonBody('{}');
      break;
    }
    case 'unknown-field': {
      const objPaths = paths(valid).filter((p) => {
        const v = p.reduce((o: any, k) => o?.[k], valid);
        return v && typeof v === 'object' && !Array.isArray(v);
      });
      const key = rng.pick(['unknown_field', '__proto__', 'constructor', 'prototype', '$where', 'a.b', '', '\u0000', 'x'.repeat(300)]);
      if (objPaths.length) {
        const at = rng.pick(objPaths);
        label += ` ${JSON.stringify(key)} at /${at.join('/')}`;
        // added as text so that __proto__ is a real own key in the JSON
        const inner = serialize(at.reduce((o: any, k) => o?.[k], valid));
        const withKey = inner === '{}' ? `{${JSON.stringify(key)}:1}` : `{${JSON.stringify(key)}:1,${inner.slice(1)}`;
        jsonBody(serialize(setAt(valid, at, raw(withKey))));
      } else jsonBody(`{${JSON.stringify(key)}:{"polluted":true}}`);
      break;
    }
    case 'extreme-number': {
      const n = rng.pick(EXTREME_NUMBERS);
      label += ` ${n.slice(0, 40)}`;
      jsonBody(serialize(op.body ? mutateAt(raw(n)) : raw(n)));
      break;
    }
    case 'odd-string': {
      const str = rng.pick(ODD_STRINGS);
      label += ` ${JSON.stringify(str.slice(0, 20))}${str.length > 20 ? `…(${str.length})` : ''}`;
      jsonBody(serialize(op.body ? mutateAt(str) : str));
      break;
    }
    case 'deep-nesting': {
      const depth = rng.pick([28, 31, 33, 64, 999, 3_000, 10_000]);
      const shape = rng.pick(['array', 'object'] as const);
      label += ` ${shape} ${depth}`;
      const nested = deepJson(depth, shape);
      // metadata-like free objects first: they are where depth reaches storage
      const s = op.body ? resolve(doc, op.body) : {};
      const freeKey = Object.entries<Schema>(s.properties ?? {}).find(([, v]) => {
        const r = resolve(doc, v);
        return r.type === 'object' && !r.properties && r.additionalProperties === undefined;
      })?.[0];
      if (freeKey && rng.chance(0.6) && valid && typeof valid === 'object') {
        label += ` in ${freeKey}`;
        jsonBody(serialize({ ...(valid as object), [freeKey]: raw(`{"a":${nested}}`) }));
      } else if (op.body && rng.chance(0.5)) jsonBody(serialize(mutateAt(raw(nested))));
      else jsonBody(nested);
      break;
    }
    case 'raw-body': {
      const text = rng.pick([
        '{',
        '}',
        '[]',
        '"str"',
        'null',
        '1',
        'true',
        '',
        ' ',
        '{"a":1,"a":2}',
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '\ufeff{}',
        '{"a":NaN}',
        '{"a":Infinity}',
        "{'a':1}",
        '{"a":1}garbage',
        '\u0000',
        '{"a":"\\ud800"}',
        '{"a":"\\u0000"}',
        '[' + '1,'.repeat(10_000) + '1]',
      ]);
      label += ` ${JSON.stringify(text.slice(0, 30))}`;
      jsonBody(text);
      if (rng.chance(0.2)) {
        body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
        label += ' (invalid utf-8)';
      }
      break;
    }
    case 'bad-encoding': {
      const plain = Buffer.from(serialize(valid ?? {}));
      const variant = rng.pick([
        'gzip-garbage',
        'deflate-garbage',
        'br-garbage',
        'gzip-valid',
        'deflate-valid',
        'gzip-truncated',
        'unknown-encoding',
        'double-encoding',
        'text/plain',
        'form',
        'multipart',
        'utf-16',
        'no-content-type',
        'json-uppercase',
        'chunked',
      ] as const);
      label += ` ${variant}`;
      headers['Content-Type'] = 'application/json';
      body = plain;
      const garbage = Buffer.from('this is not compressed at all \u0000\u00ff'.repeat(3));
      if (variant === 'gzip-garbage') {
        headers['Content-Encoding'] = 'gzip';
        body = garbage;
      }
      if (variant === 'deflate-garbage') {
        headers['Content-Encoding'] = 'deflate';
        body = garbage;
      }
      if (variant === 'br-garbage') {
        headers['Content-Encoding'] = 'br';
        body = garbage;
      }
      if (variant === 'gzip-valid') {
        headers['Content-Encoding'] = 'gzip';
        body = gzipSync(plain);
      }
      if (variant === 'deflate-valid') {
        headers['Content-Encoding'] = 'deflate';
        body = deflateSync(plain);
      }
      if (variant === 'gzip-truncated') {
        headers['Content-Encoding'] = 'gzip';
        const z = gzipSync(plain);
        body = z.subarray(0, Math.max(4, z.length >> 1));
      }
      if (variant === 'unknown-encoding') headers['Content-Encoding'] = 'compress';
      if (variant === 'double-encoding') {
        headers['Content-Encoding'] = 'gzip, gzip';
        body = gzipSync(plain);
      }
      if (variant === 'text/plain') headers['Content-Type'] = 'text/plain';
      if (variant === 'form') {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = Buffer.from('a=1&b[c]=2&__proto__[x]=1');
      }
      if (variant === 'multipart') {
        headers['Content-Type'] = 'multipart/form-data; boundary=x';
        body = Buffer.from('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n');
      }
      if (variant === 'utf-16') {
        headers['Content-Type'] = 'application/json; charset=utf-16';
        body = Buffer.from(plain.toString(), 'utf16le');
      }
      if (variant === 'no-content-type') delete headers['Content-Type'];
      if (variant === 'json-uppercase') headers['Content-Type'] = 'APPLICATION/JSON; Charset=UTF-8';
      if (variant === 'chunked') headers['Transfer-Encoding'] = 'chunked';
      break;
    }
    case 'huge-header': {
      const variant = rng.pick([
        'one-20kb',
        'many',
        'idempotency-8kb',
        'api-key-8kb',
        'merchant-id',
        'if-none-match',
        'forwarded-for',
        'authorization-odd',
      ] as const);
      label += ` ${variant}`;
      if (variant === 'one-20kb') headers['X-Filler'] = 'a'.repeat(20_000);
      if (variant === 'many') for (let i = 0; i < 120; i++) headers[`X-Filler-${i}`] = 'b'.repeat(200);
      if (variant === 'idempotency-8kb') headers['Idempotency-Key'] = 'k'.repeat(8_000);
      if (variant === 'api-key-8kb') headers['X-API-Key'] = 'k'.repeat(8_000);
      if (variant === 'merchant-id') headers['X-Merchant-Id'] = rng.pick(['', 'mer_x', '\u00ff'.repeat(100), '*', 'a'.repeat(4_000)]);
      if (variant === 'if-none-match') headers['If-None-Match'] = rng.pick(['*', '"x"', 'W/"' + 'a'.repeat(4_000) + '"', '', ',,,']);
      if (variant === 'forwarded-for')
        headers['X-Forwarded-For'] = rng.pick(['garbage', '::ffff:999.1.1.1', '1.1.1.1, '.repeat(500), '[::1]:80', '']);
      if (variant === 'authorization-odd')
        headers.Authorization = rng.pick([
          'Bearer',
          'Bearer ',
          'Basic Zm9vOmJhcg==',
          'bearer x y z',
          'Bearer ' + 'x'.repeat(6_000),
          '\u00ff',
        ]);
      if (op.body) jsonBody(serialize(valid));
      break;
    }
    case 'bad-path': {
      if (op.pathParams.length) {
        const p = rng.pick(op.pathParams);
        const v = rng.pick(BAD_PATH_VALUES);
        label += ` ${p}=${v.slice(0, 30)}`;
        pathValues[p] = v;
      } else {
        const suffix = rng.pick(['/%ZZ', '/..%2f..%2f', '/extra', '//', '/%00', '?%ZZ=1', '#frag']);
        label += ` suffix ${suffix}`;
        pathValues.__suffix = suffix;
      }
      if (op.body) jsonBody(serialize(valid));
      break;
    }
    case 'bad-query': {
      const names = op.query.length ? op.query.map((q) => q.name) : ['limit', 'cursor', 'unknown'];
      const n = rng.pick(names);
      const v = rng.pick(BAD_QUERY_VALUES);
      label += ` ${n}=${v.slice(0, 30)}`;
      query.push(`${n}=${v}`);
      if (rng.chance(0.3)) {
        query.push(`${n}=1`);
        label += ' (repeated)';
      }
      if (rng.chance(0.2)) {
        query.push(`${n}[a][b]=1`, '__proto__[polluted]=1');
        label += ' (brackets)';
      }
      if (op.body) jsonBody(serialize(valid));
      break;
    }
    case 'wrong-method': {
      const m = rng.pick(['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'POST'].filter((x) => x !== op.method));
      label += ` ${m}`;
      return finish(m);
    }
  }
  return finish(op.method);

  function finish(method: string): FuzzRequest {
    let path = op.path.replace(/\{(\w+)\}/g, (_m, p: string) => pathValues[p] ?? 'x');
    if (pathValues.__suffix) path += pathValues.__suffix;
    if (query.length) path += (path.includes('?') ? '&' : '?') + query.join('&');
    const auth = rng.pick(['valid', 'valid', 'valid', 'bearer', 'none', 'bad-key', 'bad-bearer'] as const);
    return { label: `${op.method} ${op.path} [${label}]`, method, path, headers, body, auth };
  }
}

export const KINDS = [
  'valid',
  'wrong-type',
  'missing-required',
  'unknown-field',
  'extreme-number',
  'odd-string',
  'deep-nesting',
  'raw-body',
  'bad-encoding',
  'huge-header',
  'bad-path',
  'bad-query',
  'wrong-method',
] as const;
export const BODY_KINDS = new Set([
  'wrong-type',
  'missing-required',
  'unknown-field',
  'extreme-number',
  'odd-string',
  'deep-nesting',
  'raw-body',
  'bad-encoding',
]);

const ENVELOPE_KEYS = new Set(['code', 'message', 'field', 'remediation', 'request_id', 'retryable', 'errors']);

/**
 * What is wrong with an error answer's body, or null: exactly the envelope (code, message, remediation,
 * request_id and retryable always; field and errors[] only as the Error schema allows), request_id equal
 * to the X-Request-Id header, retryable true for 429 and 5xx, and never a field on a 5xx.
 */
export function envelopeProblem(status: number, requestIdHeader: string | undefined | null, body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'body is not an object';
  const e = body as Record<string, unknown>;
  const extra = Object.keys(e).filter((k) => !ENVELOPE_KEYS.has(k));
  if (extra.length) return `unknown keys ${extra.join()}`;
  if (typeof e.code !== 'number' || typeof e.message !== 'string' || !e.message) return 'code or message missing or of the wrong type';
  if (typeof e.remediation !== 'string' || e.remediation.length < 10) return 'no remediation';
  if (typeof e.request_id !== 'string' || !e.request_id) return 'no request_id';
  if (e.request_id !== requestIdHeader) return `request_id ${e.request_id} is not the X-Request-Id header ${requestIdHeader}`;
  if (typeof e.retryable !== 'boolean') return 'retryable is not a boolean';
  if ((status === 429 || status === 500) && e.retryable !== true) return `a ${status} that is not retryable`;
  if (status >= 400 && status < 500 && status !== 429 && e.retryable && e.code !== 5) return `a ${status} marked retryable`;
  if ('field' in e && (typeof e.field !== 'string' || !e.field)) return 'field is not a non-empty string';
  if (status >= 500 && 'field' in e) return 'a server error names a field';
  if ('errors' in e) {
    if (!Array.isArray(e.errors) || e.errors.length === 0) return 'errors is not a non-empty array';
    for (const x of e.errors as Record<string, unknown>[]) {
      if (!x || typeof x !== 'object' || typeof x.message !== 'string') return 'an errors[] entry has no message';
      if (Object.keys(x).some((k) => k !== 'field' && k !== 'message')) return 'an errors[] entry has unknown keys';
      if ('field' in x && typeof x.field !== 'string') return 'an errors[] field is not a string';
    }
    const first = (e.errors as { field?: string; message: string }[])[0];
    if (first.message !== e.message || first.field !== e.field) return 'errors[0] is not the message and field of the envelope';
  }
  return null;
}
