import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePort, type TestDatabase, testMode, testRedisUrl, uniqueSuffix } from './test-env.js';

export const TEST_PASSWORD = 'Test-Passw0rd-e2e';

const here = dirname(fileURLToPath(import.meta.url));
/** dist/libs/testing/src → repository root. */
export const REPO_ROOT = resolve(here, '../../../..');
export const SERVER_ENTRY = join(REPO_ROOT, 'dist/server/main.js');

export interface StartOptions {
  /** Extra or overriding environment variables (undefined removes one). */
  env?: Record<string, string | undefined>;
  /** Reuse a data folder (restarts, two processes on one folder). */
  dataDir?: string;
  /** Share backing services with another server (replicas). */
  services?: SharedServices;
  /** Resolve once spawned instead of waiting for "listening" (start-up failure tests). */
  waitForListening?: boolean;
  /** Command-line arguments of the entry point (a subcommand such as `migrate`). */
  args?: string[];
  /** Options of node itself (bench: `--cpu-prof`, which NODE_OPTIONS does not take). */
  nodeArgs?: string[];
}

/** A Postgres database and a Redis key prefix that several replicas can share. */
export interface SharedServices {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  dispose(): Promise<void>;
}

export async function createSharedServices(): Promise<SharedServices> {
  const db: TestDatabase = await createTestDatabase();
  return {
    databaseUrl: db.url,
    redisUrl: testRedisUrl(),
    redisPrefix: `svc-test-${uniqueSuffix()}`,
    dispose: () => db.drop(),
  };
}

export interface TestServer {
  readonly port: number;
  readonly url: string;
  readonly wsUrl: string;
  readonly password: string;
  readonly dataDir: string;
  readonly process: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/**
 * Writes a server's last `last` output lines (only those `matching`, when given) to the test's
 * output under a heading: what a test prints before failing on something it cannot see.
 */
export function printServerLines(server: TestServer, last: number, matching?: RegExp): void {
  const lines = server.output().split('\n');
  const chosen = matching ? lines.filter((l) => matching.test(l)) : lines;
  process.stdout.write(`server ${server.process.pid}:\n${chosen.slice(-last).join('\n')}\n`);
}

/**
 * Starts the real server (the built entry point) as a child process on a free port with
 * a fresh data folder; in services mode, against a fresh Postgres database and Redis prefix.
 */
export function startServer(options: StartOptions = {}): Promise<TestServer> {
  return startOnFreePort(options, 3);
}

async function startOnFreePort(options: StartOptions, portTries: number): Promise<TestServer> {
  const port = await freePort();
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  let services = options.services;
  let ownServices = false;
  if (!services && testMode() === 'services') {
    services = await createSharedServices();
    ownServices = true;
  }
  const template = process.env.SVC_TEST_DB_TEMPLATE;
  if (ownDataDir && !services && template && existsSync(join(template, 'db'))) {
    // A pre-initialized embedded database: skips PGlite's slow first initdb.
    cpSync(join(template, 'db'), join(dataDir, 'db'), { recursive: true });
  }

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v !== undefined &&
      !k.startsWith('SVC_') &&
      !['PORT', 'DATABASE_URL', 'REDIS_URL', 'HOST', 'LOG_LEVEL'].includes(k)
    ) {
      env[k] = v;
    }
  }
  Object.assign(env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    SVC_DATA_DIR: dataDir,
    SVC_REMOTE_PASSWORD: TEST_PASSWORD,
    LOG_LEVEL: 'info',
    SVC_STORE_SOURCES: 'http://127.0.0.1:9/unused',
    SVC_STORE_CATALOGS: 'none',
    SVC_TEST_HOOKS: '1',
    // Tests tick every second or two; the floor has a test of its own.
    SVC_SCHEDULE_MIN_INTERVAL: '0',
  });
  if (services) {
    Object.assign(env, {
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      SVC_REDIS_PREFIX: services.redisPrefix,
    });
  }
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }

  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), SERVER_ENTRY, ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on('exit', (code, signal) => res({ code, signal })),
  );

  let stopped = false;
  const server: TestServer = {
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    password: env.SVC_REMOTE_PASSWORD ?? '',
    dataDir,
    process: child,
    output: () => output,
    exited,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
        await exited;
        clearTimeout(timer);
      }
      if (ownServices) await services!.dispose().catch(() => undefined);
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };

  if (options.waitForListening === false) return server;
  // Generous: a start on a loaded 2-core CI machine (several suites at once) took over 60 s.
  const deadline = Date.now() + 150_000;
  while (!output.includes('"msg":"svc-server listening on ')) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await server.stop();
      // Another process took the port between freePort's check and the child's bind: rare, and
      // not what the test is about, so the server starts again on another port.
      if (output.includes('EADDRINUSE') && portTries > 1) return startOnFreePort(options, portTries - 1);
      throw new Error(`server exited before listening (code ${child.exitCode}):\n${output}`);
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`server did not start within 150 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return server;
}
