/**
 * A real PostgreSQL for tests: the server on 127.0.0.1:5432 when it answers (trust auth, user postgres),
 * otherwise one started here from Debian's `postgresql` package (initdb in a temporary directory, run as
 * an unprivileged user because CI runs as root) on a free port, stopped when the test process exits.
 * PG_TEST_SELF_START=1 skips the shared server (to test this path on a machine that has one).
 *
 * Every suite takes a fresh database (`freshDatabase`), created with byte-order collation and dropped
 * at the end.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { freePort, untilListening } from './ports.ts';
import { reapWith } from './reaper.ts';

export interface PgServer {
  /** postgres://postgres@host:port (no database) */
  url: string;
  host: string;
  port: number;
  /** true when this process started it */
  own: boolean;
  stop(): Promise<void>;
  /** a server this process started: stops it now (immediate shutdown, as a crash) and starts it again on the same data and port */
  restart?(downMs?: number): Promise<void>;
  /** a server this process started: immediate shutdown (`pg_ctl stop -m immediate`), connections drop as in a crash */
  crash?(): Promise<void>;
  /** a server this process started, after crash(): starts it again on the same data and port */
  start?(): Promise<void>;
}

export interface StartOptions {
  /** addresses to listen on (default 127.0.0.1) */
  listen?: string;
  /** extra pg_hba.conf lines (trust from the given networks) */
  hba?: string[];
  /** extra server settings (-c name=value) */
  settings?: Record<string, string>;
}

let shared: Promise<PgServer> | null = null;

async function answers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: `${url}/postgres`, connectionTimeoutMillis: 2000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** the newest installed server's bin directory; installs Debian's postgresql when missing and root */
export function postgresBin(): string {
  const find = () => {
    const base = '/usr/lib/postgresql';
    if (!existsSync(base)) return null;
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    return versions.length ? join(base, versions[0], 'bin') : null;
  };
  let bin = find();
  if (!bin && process.getuid?.() === 0) {
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
    bin = find();
  }
  if (!bin)
    throw new Error(
      'tests need PostgreSQL: nothing answers on 127.0.0.1:5432 and no server is installed under /usr/lib/postgresql; apt-get install postgresql (.ci/run does)',
    );
  return bin;
}

/** uid/gid of an unprivileged user to run the server as (PostgreSQL refuses root) */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      /* try the next */
    }
  }
  throw new Error('no unprivileged user (postgres or nobody) to run a test PostgreSQL as');
}

function chownTree(dir: string, user: { uid: number; gid: number } | null): void {
  if (!user) return;
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
}

/** an initdb'd data directory, made once per machine and copied for each server (initdb takes seconds) */
function templateDataDir(bin: string, user: { uid: number; gid: number } | null): string {
  const version = bin.split('/').slice(-2)[0];
  const tpl = join(tmpdir(), `pay-test-pg${version}-template-${user?.uid ?? process.getuid?.()}`);
  if (existsSync(join(tpl, 'PG_VERSION'))) return tpl;
  const work = mkdtempSync(join(tmpdir(), 'pay-test-pginit-'));
  chownSync(work, user?.uid ?? process.getuid!(), user?.gid ?? process.getgid!());
  execFileSync(
    join(bin, 'initdb'),
    ['-D', join(work, 'data'), '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--lc-collate=C', '--no-sync'],
    { stdio: 'ignore', ...(user ?? {}) },
  );
  try {
    renameSync(join(work, 'data'), tpl); // atomic: a parallel worker that lost the race keeps its own
  } catch {
    /* another process made it first */
  }
  rmSync(work, { recursive: true, force: true });
  return existsSync(join(tpl, 'PG_VERSION')) ? tpl : join(work, 'data');
}

/** Starts a PostgreSQL server of this process on a free port (trust auth, user postgres). */
export async function startPostgresServer(opts: StartOptions = {}): Promise<PgServer> {
  const bin = postgresBin();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'pay-test-pg-'));
  const data = join(dir, 'data');
  cpSync(templateDataDir(bin, user), data, { recursive: true });
  for (const line of opts.hba ?? []) appendFileSync(join(data, 'pg_hba.conf'), `${line}\n`);
  chownTree(dir, user);
  chmodSync(data, 0o700);
  const port = await freePort();
  const settings = {
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: '300',
    ...opts.settings,
  };
  const args = ['-D', data, '-p', String(port), '-k', dir, '-h', opts.listen ?? '127.0.0.1'];
  for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);
  let out = '';
  let proc: ChildProcess;
  const launch = () => {
    proc = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) });
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    // the shared server is never stopped: it goes with the test process (under jest the exit hook below never runs)
    reapWith(proc, dir);
  };
  const kill = () => {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', kill);
  const host = '127.0.0.1';
  const url = `postgres://postgres@${host}:${port}`;
  const ready = () => untilListening('postgres', proc, port, () => answers(url), { timeoutMs: 30_000, output: () => out, onTimeout: kill });
  const exited = () => new Promise<void>((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', () => r())));
  const crash = async () => {
    const gone = exited();
    proc.kill('SIGQUIT'); // what pg_ctl stop -m immediate sends: connections drop as in a crash
    await gone;
  };
  const start = async () => {
    rmSync(join(data, 'postmaster.pid'), { force: true });
    launch();
    await ready();
  };
  launch();
  await ready();
  return {
    url,
    host,
    port,
    own: true,
    async stop() {
      process.removeListener('exit', kill);
      const gone = exited();
      proc.kill('SIGINT'); // fast shutdown
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
    crash,
    start,
    async restart(downMs = 0) {
      await crash();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
  };
}

/** The server tests use: the shared one on 127.0.0.1:5432, or one started here. */
export function ensurePostgres(): Promise<PgServer> {
  shared ??= (async () => {
    const local = 'postgres://postgres@127.0.0.1:5432';
    if (!process.env.PG_TEST_SELF_START && (await answers(local)))
      return { url: local, host: '127.0.0.1', port: 5432, own: false, stop: async () => undefined };
    return startPostgresServer();
  })();
  return shared;
}

export interface TestDatabase {
  /** STORE_URL of the database */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new, empty database on `server` (default: ensurePostgres()), with byte-order collation; drop() removes it. */
export async function freshDatabase(prefix = 'test', server?: PgServer): Promise<TestDatabase> {
  const srv = server ?? (await ensurePostgres());
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: `${srv.url}/postgres` });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C'`);
  return {
    url: `${srv.url}/${name}`,
    name,
    drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
