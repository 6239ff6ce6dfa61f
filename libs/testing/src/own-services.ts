import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './test-env.js';
import { sleep } from './wait.js';

/**
 * Backing services a fault-injection test owns: its own PostgreSQL (initdb + postgres from
 * the Debian packages) and its own redis-server, each on a free loopback port in a temporary
 * folder, so a test can stop, freeze or restart them without touching anyone else's.
 */

export const PG_BIN = process.env.SVC_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;

/** Why own services cannot be started here, or null. */
export function missingPrerequisite(): string | null {
  if (!existsSync(join(PG_BIN, 'postgres')) || !existsSync(join(PG_BIN, 'initdb'))) {
    return `PostgreSQL binaries not found in ${PG_BIN} (set SVC_PG_BIN)`;
  }
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'redis-server is not on PATH';
  }
  if (isRoot) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root without a postgres user to run PostgreSQL as';
    }
  }
  return null;
}

/** Whether this machine can mount a small tmpfs (root, and allowed by the container). */
export function canMount(): boolean {
  if (!isRoot) return false;
  const dir = mkdtempSync(join(tmpdir(), 'svc-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

let ids: { uid: number; gid: number } | null = null;
function postgresIds(): { uid: number; gid: number } {
  ids ??= {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
  return ids;
}

/** Gives a copied tree to the postgres user (a copy made as root belongs to root). */
function chownTree(path: string, { uid, gid }: { uid: number; gid: number }): void {
  chownSync(path, uid, gid);
  for (const entry of readdirSync(path, { recursive: true })) chownSync(join(path, String(entry)), uid, gid);
}

let template: string | null = null;
/** The folder of a fresh cluster (initdb, once per process); removed when the process exits. */
function templateCluster(): string {
  if (template) return template;
  const dir = mkdtempSync(join(tmpdir(), 'svc-fault-pg-template-'));
  const data = join(dir, 'data');
  mkdirSync(data);
  if (isRoot) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  const [cmd, args] = asPostgres(join(PG_BIN, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  execFileSync(cmd, args, { stdio: 'ignore' });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  template = data;
  return template;
}

export class OwnPostgres {
  private child: ChildProcess | null = null;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /**
   * A fresh cluster in a folder of its own, then start. initdb runs once per test process (into
   * a template folder, removed at exit); each start copies that template, which is the same
   * fresh cluster in a tenth of the time (a copy takes about 0.15 s, initdb 2 s or more under
   * load).
   */
  static async start(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fault-pg-'));
    if (isRoot) {
      const { uid, gid } = postgresIds();
      chownSync(dir, uid, gid);
    }
    cpSync(templateCluster(), join(dir, 'data'), { recursive: true, preserveTimestamps: true });
    if (isRoot) chownTree(join(dir, 'data'), postgresIds());
    const server = new OwnPostgres(dir, await freePort());
    await server.resume();
    return server;
  }

  /** Starts (again) on the same folder and port; resolves once it answers. */
  async resume(): Promise<void> {
    const [cmd, args] = asPostgres(join(PG_BIN, 'postgres'), [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=60',
    ]);
    const child = spawn(cmd, args, { stdio: 'ignore' });
    this.child = child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
        await client.connect();
        await client.end();
        return;
      } catch (err) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`postgres did not start: ${(err as Error).message}`, { cause: err });
        await sleep(100);
      }
    }
  }

  /** Fast shutdown (what an operator's `pg_ctl stop -m fast` does); resolves once it exited. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    // runuser does not pass signals on: signal the postmaster itself (fast shutdown).
    const pid = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGINT');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
}

export class OwnRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const server = new OwnRedis(await freePort());
    await server.restart();
    return server;
  }

  /** (Re)starts with nothing in it: no persistence. */
  async restart(): Promise<void> {
    await this.stop();
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start');
      await sleep(50);
    }
  }

  /** SIGSTOP: connections stay open but nothing answers. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

async function answersPing(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      resolve(d.toString().startsWith('+PONG'));
      socket.destroy();
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      resolve(false);
      socket.destroy();
    });
  });
}

/**
 * Skips (outside CI) or fails (in CI, `CI` or `REQUIRE_SERVICES=1`) when own services
 * cannot be started; returns the reason to skip, or null to run.
 */
export function faultSuiteSkipReason(): string | null {
  const missing = missingPrerequisite();
  if (!missing) return null;
  if (process.env.CI || process.env.REQUIRE_SERVICES === '1') {
    throw new Error(`fault-injection suite cannot run: ${missing}`);
  }
  return `fault-injection suite skipped: ${missing}`;
}
