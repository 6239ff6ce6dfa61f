import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import pg from 'pg';

/** Which backing services the end-to-end suite runs against (set by scripts/run-tests.mjs). */
export type TestMode = 'embedded' | 'services';

export function testMode(): TestMode {
  return process.env.SVC_TEST_MODE === 'services' ? 'services' : 'embedded';
}

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/**
 * Ports handed out for servers a test starts later (the server under test, nginx, dovecot…).
 * Not the kernel's `listen(0)`: that hands out the ephemeral range, which the many outgoing
 * connections of two test files running at once (to Postgres, Redis, the servers under test)
 * also draw from, so a port found free and released here could be a client socket's by the time
 * the child binds it (EADDRINUSE in CI with files two at a time). These come from below that
 * range, in sequence from a random place per process (two files at once start far apart), each
 * checked free by binding it.
 */
const TEST_PORTS = { low: 20_000, high: 32_000 };
let testPortsHigh = 0;
let nextTestPort = 0;

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return Number(low) || 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  if (testPortsHigh === 0) {
    testPortsHigh = Math.min(TEST_PORTS.high, ephemeralLow());
    nextTestPort = TEST_PORTS.low + randomInt(testPortsHigh - TEST_PORTS.low);
  }
  const high = testPortsHigh;
  for (let tries = 0; tries < 200; tries += 1) {
    const port = nextTestPort;
    nextTestPort = nextTestPort + 1 >= high ? TEST_PORTS.low : nextTestPort + 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${TEST_PORTS.low}-${high} after 200 tries`);
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the test Postgres server; dropped by `drop()`. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = adminDatabaseUrl();
  const name = `svc_test_${uniqueSuffix()}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Whether the Postgres and Redis servers of the services run answer. */
export async function servicesAvailable(): Promise<{ ok: boolean; reason?: string }> {
  try {
    await withClient(adminDatabaseUrl(), (c) => c.query('SELECT 1'));
  } catch (err) {
    return { ok: false, reason: `Postgres at ${redact(adminDatabaseUrl())}: ${(err as Error).message}` };
  }
  const redis = new URL(testRedisUrl());
  const ok = await new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(redis.port || 6379), redis.hostname);
    socket.setTimeout(2000);
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
  return ok ? { ok: true } : { ok: false, reason: `Redis at ${testRedisUrl()} does not answer PING` };
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
