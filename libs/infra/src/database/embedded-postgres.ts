import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { serializeProtocolExchanges } from './pglite-socket-serialization.js';
import { removeStaleSocketFolders, SOCKET_FOLDER_PREFIX, SOCKET_NAME } from './stale-socket-folders.js';

/** Enough for TypeORM's pool, the queue's pools and its listener together. */
const MAX_CONNECTIONS = 48;

/**
 * PGlite (Postgres compiled to WASM) served inside this process over the Postgres wire
 * protocol on a private unix socket, so the normal `pg` driver, TypeORM and BullMQ's
 * Postgres backend work unchanged. The socket server holds PGlite's single session for
 * a whole transaction, which keeps concurrent transactions isolated.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    private readonly socketDir: string,
    readonly url: string,
  ) {}

  /**
   * `seed`: for a data folder without a database yet, fills the empty database folder with a
   * prepared database (PGlite's initdb takes seconds) and answers whether it did. A seeded
   * folder that does not open is emptied and initialized as usual.
   */
  static async start(dataDir: string, options: { seed?: (dbDir: string) => boolean } = {}): Promise<EmbeddedPostgres> {
    // Folders of killed processes (their sockets answer no more) would pile up in /tmp.
    await removeStaleSocketFolders();
    const dbDir = join(dataDir, 'db');
    const fresh = !existsSync(dbDir) || readdirSync(dbDir).length === 0;
    mkdirSync(dbDir, { recursive: true });
    const db = await openDatabase(dbDir, fresh && options.seed ? options.seed : null);
    // BullMQ's Postgres backend pins search_path with a startup option the socket server
    // ignores; one shared session means setting it once here serves every client.
    await db.exec('CREATE SCHEMA IF NOT EXISTS bullmq; SET search_path TO public, bullmq');
    // A short private directory: unix socket paths are limited to ~107 bytes.
    const socketDir = mkdtempSync(join(tmpdir(), SOCKET_FOLDER_PREFIX));
    const server = new PGLiteSocketServer({
      db,
      path: join(socketDir, SOCKET_NAME),
      maxConnections: MAX_CONNECTIONS,
    });
    serializeProtocolExchanges(server);
    await server.start();
    const url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
    return new EmbeddedPostgres(db, server, socketDir, url);
  }

  /**
   * A consistent copy of the database files (a gzipped tar of PGlite's data folder), taken
   * between queries of its single session, so it can run while the server serves.
   */
  async dump(): Promise<Blob> {
    return this.db.dumpDataDir('gzip');
  }

  async stop(): Promise<void> {
    await this.server.stop().catch(() => undefined);
    await this.db.close().catch(() => undefined);
    rmSync(this.socketDir, { recursive: true, force: true });
  }
}

async function openDatabase(dbDir: string, seed: ((dbDir: string) => boolean) | null): Promise<PGlite> {
  try {
    if (seed?.(dbDir)) return await PGlite.create(dbDir);
  } catch {
    // A seed this PGlite cannot open: start over with initdb.
    rmSync(dbDir, { recursive: true, force: true });
    mkdirSync(dbDir, { recursive: true });
  }
  return PGlite.create(dbDir);
}
