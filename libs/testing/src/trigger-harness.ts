import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type request from 'supertest';
import { apiClient, okData } from './api-client.js';
import { type Replicas, startReplicas } from './replicas.js';
import { ScriptedModelServer, scriptedModelEnv } from './scripted-model-server.js';
import { testMode } from './test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from './test-server.js';
import { completeEveryRun, type StartedRun, startedRuns } from './trigger-runs.js';
import { waitFor } from './wait.js';

/**
 * The setup the trigger e2e files share: a scripted model that completes every run (or fails
 * the runs of chosen apps), a server pointed at it (on shared Postgres + Redis in services
 * mode), an authorised API client, automation specs tagged so each run can be told apart.
 */

/** An automation spec whose system prompt carries `[[tag]]` (how `runsOf(tag)` finds its runs). */
export function automationSpec(
  tag: string,
  subscriptions: object[],
  name = `Triggered ${tag}`,
): Record<string, unknown> {
  return {
    spec_version: '1',
    name,
    version: '1.0.0',
    author: 'alice',
    description: 'Runs on its triggers.',
    type: 'automation',
    system_prompt: `[[${tag}]] Do the task, then report.`,
    subscriptions,
  };
}

/** A schedule subscription `every: <period>`. */
export const everySub = (period: string, id = 'tick') => ({
  id,
  source: { type: 'schedule', config: { every: period } },
});

export interface TriggerApi {
  get(path: string): request.Test;
  post(path: string, body?: object): request.Test;
  patch(path: string, body: object): request.Test;
  delete(path: string): request.Test;
}

/** An API client with the access password of whichever server `current()` answers. */
export function apiOf(current: () => TestServer): TriggerApi {
  return {
    get: (p) => apiClient(current()).get(p),
    post: (p, body = {}) => apiClient(current()).post(p, body),
    patch: (p, body) => apiClient(current()).patch(p, body),
    delete: (p) => apiClient(current()).del(p),
  };
}

export interface AppState {
  status?: string;
  nextRunAtMs: number | null;
  runningCount: number;
  lastError?: string | null;
  triggers: Array<{ id: string; type: string; fires: boolean; note?: string; path?: string }>;
}

/** Helpers over one API and one model: runs seen, state, install, waiting for an idle app. */
export class TriggerChecks {
  constructor(
    readonly api: TriggerApi,
    readonly model: ScriptedModelServer,
  ) {}

  runsOf(tag: string): StartedRun[] {
    return startedRuns(this.model.requests).filter((r) => r.tag === tag);
  }

  async state(appId: string): Promise<AppState> {
    return okData<AppState>(await this.api.get(`/api/apps/${appId}/state`));
  }

  async space(name: string): Promise<string> {
    return okData<{ id: string }>(await this.api.post('/api/spaces', { name })).id;
  }

  async install(spec: object, spaceId: string | null): Promise<string> {
    return okData<{ appId: string }>(await this.api.post('/api/apps/install', { spec, spaceId })).appId;
  }

  async installedAt(appId: string): Promise<number> {
    return okData<{ installedAt: number }>(await this.api.get(`/api/apps/${appId}`)).installedAt;
  }

  /** A run in progress makes the next trigger a `run_skipped`: waits for the app to be idle. */
  idle(appId: string, timeoutMs = 30_000): Promise<void> {
    return waitFor(async () => (await this.state(appId)).runningCount === 0, timeoutMs, 'app idle');
  }
}

export interface TriggerHarnessOptions {
  /** Extra server environment. */
  env?: Record<string, string>;
  /** Tags whose runs the model fails with an HTTP 400 (`scripted failure of <tag>`). */
  failTags?: Iterable<string>;
  /** Tags whose runs take this many ms before they report. */
  slowTags?: Record<string, number>;
  /** Reuse a data folder (default: a new one, removed by `stop`). */
  dataDir?: string;
}

/**
 * One server (embedded, or on fresh shared Postgres + Redis in services mode) with a scripted
 * model, and the checks above. `restart` stops and starts it on the same data (downtime tests).
 */
export class TriggerHarness extends TriggerChecks {
  private constructor(
    model: ScriptedModelServer,
    /** The shared Postgres + Redis in services mode; undefined in embedded mode. */
    readonly services: SharedServices | undefined,
    private current: TestServer,
    private readonly start: () => Promise<TestServer>,
    private readonly cleanup: () => Promise<void>,
  ) {
    super(
      apiOf(() => this.current),
      model,
    );
  }

  get server(): TestServer {
    return this.current;
  }

  static async start(options: TriggerHarnessOptions = {}): Promise<TriggerHarness> {
    const model = await ScriptedModelServer.start();
    completeEveryRun(model, new Set(options.failTags ?? []), new Map(Object.entries(options.slowTags ?? {})));
    const services: SharedServices | undefined =
      testMode() === 'services'
        ? await createSharedServices().catch(async (err: unknown) => {
            await model.close();
            throw err;
          })
        : undefined;
    const ownDir = options.dataDir === undefined;
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-triggers-'));
    const cleanup = async () => {
      await model.close();
      await services?.dispose();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    };
    const start = () => startServer({ dataDir, services, env: { ...scriptedModelEnv(model), ...options.env } });
    let server: TestServer;
    try {
      server = await start();
    } catch (err) {
      await cleanup();
      throw err;
    }
    return new TriggerHarness(model, services, server, start, cleanup);
  }

  async stopServer(): Promise<void> {
    await this.current.stop();
  }

  /** Starts the server again on the same data (after `stopServer`). */
  async startServer(): Promise<void> {
    this.current = await this.start();
  }

  async stop(): Promise<void> {
    await this.current.stop();
    await this.cleanup();
  }
}

/** Two replicas (`startReplicas`) whose model completes every run, with the checks above on replica `a`. */
export async function startTriggerReplicas(options: { env?: Record<string, string> } = {}): Promise<{
  replicas: Replicas;
  checks: TriggerChecks;
  apiTo: (server: TestServer) => TriggerApi;
}> {
  const replicas = await startReplicas(options);
  completeEveryRun(replicas.model);
  return {
    replicas,
    checks: new TriggerChecks(
      apiOf(() => replicas.a),
      replicas.model,
    ),
    apiTo: (server) => apiOf(() => server),
  };
}
