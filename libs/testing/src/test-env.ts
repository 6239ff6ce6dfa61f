import { randomBytes } from 'node:crypto';
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
