import { apiClient } from './api-client.js';
import type { OwnPostgres, OwnRedis } from './own-services.js';
import { testMode } from './test-env.js';
import type { SharedServices, TestServer } from './test-server.js';

/** The fault suites' own line of what they tried and what was lost (`[faults/<mode>] …`). */
export const faultReport = (line: string): void => void process.stdout.write(`  [faults/${testMode()}] ${line}\n`);

/** A server's backing services: a Postgres and a redis-server of the test's own. */
export function ownSharedServices(pg: OwnPostgres, redis: OwnRedis): SharedServices {
  return {
    databaseUrl: pg.url,
    redisUrl: redis.url,
    redisPrefix: 'svc-fault',
    dispose: async () => undefined,
  };
}

/** The api client with a 15 s bound on each request: a server in an outage may not answer. */
export function patientClient(server: TestServer) {
  return {
    get: (path: string) => apiClient(server).get(path).timeout(15_000),
    post: (path: string, body: object) => apiClient(server).post(path, body).timeout(15_000),
  };
}
