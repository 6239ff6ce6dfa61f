import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import request from 'supertest';
import type { AppConfig } from '#core/config/app-config.js';
import { loadConfig } from '#infra/config/load-config.js';
import { Infrastructure } from '#infra/infrastructure.js';
import { AppLogger, createPino } from '#infra/logging/logger.js';
import { ASSISTANT_RELAY_HEADER } from '../apps/server/src/http/assistant-api/assistant-listener.js';
import { AppModule } from '../apps/server/src/app.module.js';
import { startAssistantRelay } from '../apps/server/src/assistant-relay.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, TEST_PASSWORD } from '#testing/test-server.js';

/** The process's Nest container for a role, composed in this process on shared Postgres and Redis. */
async function compose(
  services: SharedServices,
  dataDir: string,
  role: AppConfig['role'],
): Promise<{ app: INestApplicationContext; config: AppConfig; logger: AppLogger; close(): Promise<void> }> {
  const config = loadConfig({
    SVC_ROLE: role,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    SVC_REDIS_PREFIX: services.redisPrefix,
    SVC_DATA_DIR: dataDir,
    SVC_REMOTE_PASSWORD: TEST_PASSWORD,
    SVC_STORE_SOURCES: 'http://127.0.0.1:9/unused',
    SVC_STORE_CATALOGS: 'none',
    SVC_TEST_HOOKS: '1',
  });
  const logger = new AppLogger(createPino('error'));
  const infra = await Infrastructure.start(config, logger);
  const app = await NestFactory.createApplicationContext(AppModule.forConfig(config, infra, TEST_PASSWORD, logger), {
    logger: false,
  });
  await app.init();
  return {
    app,
    config,
    logger,
    close: async () => {
      await app.close();
      await infra.stop();
    },
  };
}

const controllersOf = (app: INestApplicationContext): string[] =>
  [...app.get(ModulesContainer).values()].flatMap((m) => [...m.controllers.values()].map((c) => c.name));

describe(
  'roles compose the process',
  { skip: testMode() === 'services' ? false : 'needs Redis (a worker role)' },
  () => {
    let services: SharedServices;
    let dataDir: string;
    before(async () => {
      services = await createSharedServices();
      dataDir = mkdtempSync(join(tmpdir(), 'svc-roles-'));
    });
    after(async () => {
      await services.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('a worker-only process loads no controller; api and all load them', async () => {
      const worker = await compose(services, dataDir, 'worker');
      try {
        assert.deepEqual(controllersOf(worker.app), []);
      } finally {
        await worker.close();
      }
      for (const role of ['api', 'all'] as const) {
        const process = await compose(services, dataDir, role);
        try {
          const controllers = controllersOf(process.app);
          for (const name of ['HealthController', 'SpacesController', 'AgentController', 'HooksController']) {
            assert.ok(controllers.includes(name), `${role} loads ${name}`);
          }
        } finally {
          await process.close();
        }
      }
    });

    it("a worker-only process's assistant relay answers the listener's calls only, over the process's services", async () => {
      const worker = await compose(services, dataDir, 'worker');
      const token = 'listener-token-for-this-test';
      const relay = await startAssistantRelay(worker.app, worker.config, worker.logger, () => token);
      try {
        const auth = `Bearer ${TEST_PASSWORD}`;
        const relayed = await request(relay.url)
          .get('/api/spaces')
          .set('Authorization', auth)
          .set(ASSISTANT_RELAY_HEADER, token);
        assert.equal(relayed.status, 200);
        assert.ok(Array.isArray(relayed.body.data), 'the spaces, from the worker container');
        const forged = await request(relay.url)
          .get('/api/spaces')
          .set('Authorization', auth)
          .set(ASSISTANT_RELAY_HEADER, 'guess');
        assert.equal(forged.status, 404);
        const unmarked = await request(relay.url).get('/api/spaces').set('Authorization', auth);
        assert.equal(unmarked.status, 404);
        // Still the worker's container: no controller was added to it.
        assert.deepEqual(controllersOf(worker.app), []);
      } finally {
        await relay.app.close();
        await worker.close();
      }
    });
  },
);
