/**
 * The reference of bench/startup: a bare Nest (Express adapter, as the server) + TypeORM app on
 * the same embedded database, started the same way as the server: the data folder locked and
 * PGlite started on its thread (from the built snapshot on a new folder) before Nest is loaded,
 * then one DataSource with the server's entities, its migrations run under the same lock (none
 * left on a seeded folder), one controller, listening. No configuration, logging, modules,
 * queue, WebSocket gateway or start-up work of the server's own.
 *
 * Env: SVC_DATA_DIR, PORT. Prints "bare nest listening on <port>" (with the milestones before
 * it as JSON lines with their time) and stops on SIGTERM.
 */
import 'reflect-metadata';
import { DataFolderLock } from '#infra/database/data-folder-lock.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { freshSnapshot } from '#infra/database/fresh-database-snapshot.js';

const mark = (msg: string, extra: Record<string, unknown> = {}): boolean =>
  process.stdout.write(`${JSON.stringify({ msg, time: new Date().toISOString(), ...extra })}\n`);

async function main(): Promise<void> {
  const dataDir = process.env.SVC_DATA_DIR!;
  const startedAt = Date.now();
  const lock = DataFolderLock.acquire(dataDir);
  const database = EmbeddedPostgres.start(dataDir, { seed: freshSnapshot() ?? undefined });
  database.catch(() => undefined);
  const [{ NestFactory }, { Controller, Get, Module }, { createDataSource, migrateUnderLock }] = await Promise.all([
    import('@nestjs/core'),
    import('@nestjs/common'),
    import('#infra/database/database.js'),
  ]);
  mark('modules loaded');
  const embedded = await database;
  mark('embedded database started', { ms: Date.now() - startedAt });
  const dataSource = createDataSource(embedded.url);
  await dataSource.initialize();
  await migrateUnderLock(dataSource);
  mark('schema ready');

  @Controller()
  class PingController {
    @Get('ping')
    ping(): { ok: boolean } {
      return { ok: true };
    }
  }
  @Module({ controllers: [PingController] })
  class AppModule {}

  const app = await NestFactory.create(AppModule, { logger: false });
  const port = Number(process.env.PORT ?? 0);
  await app.listen(port, '127.0.0.1');
  mark(`bare nest listening on ${port}`);
  process.once('SIGTERM', () => {
    void (async () => {
      await app.close();
      await dataSource.destroy();
      await embedded.stop();
      lock.release();
      process.exit(0);
    })();
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
