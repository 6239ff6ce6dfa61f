import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { createTestDatabase, testMode } from './test-env.js';

export interface FreshDatabase {
  url: string;
  dispose(): Promise<void>;
}

/** An empty database of this run's kind: a new embedded PGlite folder, or a new Postgres database. */
export async function freshDatabase(): Promise<FreshDatabase> {
  if (testMode() === 'services') {
    const db = await createTestDatabase();
    return { url: db.url, dispose: () => db.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-'));
  const embedded = await EmbeddedPostgres.start(dir);
  return {
    url: embedded.url,
    dispose: async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
