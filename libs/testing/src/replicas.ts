import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModelServer } from './scripted-model-server.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from './test-server.js';

/**
 * Two (or `count`) replicas of the real server on one Postgres database, one Redis prefix and one data
 * folder, talking to one scripted model (services mode only). `a` and `b` are the replicas
 * now running: `replace` starts a new one in place of a replica a test killed.
 */
export interface Replicas {
  readonly services: SharedServices;
  readonly model: ScriptedModelServer;
  a: TestServer;
  b: TestServer;
  /** The replicas past the first two, when `count` asked for more (a bench's load); `replace` does not touch them. */
  readonly more: TestServer[];
  /** Starts a new replica in place of `killed` (which must be `a` or `b`) and answers it. */
  replace(killed: TestServer): Promise<TestServer>;
  /** Stops every replica and the model, drops the database, removes the data folder. */
  stop(): Promise<void>;
}

export async function startReplicas(
  options: { env?: Record<string, string>; count?: number; nodeArgs?: string[] } = {},
): Promise<Replicas> {
  const services = await createSharedServices();
  const model = await ScriptedModelServer.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-replicas-'));
  const start = () =>
    startServer({
      services,
      dataDir,
      nodeArgs: options.nodeArgs,
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-replicas',
        SVC_AI_MODEL: 'scripted-model',
        ...options.env,
      },
    });
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  const more: TestServer[] = [];
  try {
    a = await start();
    b = await start();
    for (let i = 2; i < (options.count ?? 2); i++) more.push(await start());
  } catch (err) {
    for (const started of more) await started.stop();
    await b?.stop();
    await a?.stop();
    await model.close();
    await services.dispose();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const replicas: Replicas = {
    services,
    model,
    a,
    b,
    more,
    async replace(killed) {
      const next = await start();
      if (killed === replicas.a) replicas.a = next;
      else if (killed === replicas.b) replicas.b = next;
      else throw new Error('replace: not one of the two replicas');
      return next;
    },
    async stop() {
      await replicas.a.stop();
      await replicas.b.stop();
      for (const replica of more) await replica.stop();
      await model.close();
      await services.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return replicas;
}
