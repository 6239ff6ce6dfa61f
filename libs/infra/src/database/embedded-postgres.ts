import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describeError } from '../logging/describe-error.js';
import type { EmbeddedWorkerData, FromWorker, ToWorker } from './embedded-postgres.worker.js';
import { removeStaleSocketFolders, SOCKET_FOLDER_PREFIX, SOCKET_NAME } from './stale-socket-folders.js';

/** Enough for TypeORM's pool, the queue's pools and its listener together. */
const MAX_CONNECTIONS = 48;

/**
 * The database thread's V8 young generation, MB. Its JavaScript is PGlite's protocol plumbing:
 * short-lived buffers, which V8 would let grow the young generation to several times this during
 * the start and keep resident until its memory reducer runs, ~25 s into idleness. Capped, an idle
 * embedded server holds ~25 MB less (bench/memory, docs/performance.md "Memory"), and requests
 * that query it were not slower (wrk on GET /api/spaces, side by side).
 */
const DATABASE_THREAD_YOUNG_GENERATION_MB = 8;

/** How long a clean close may take before the thread is ended anyway (SIGTERM allows 10 s in all). */
const STOP_TIMEOUT_MS = 5_000;

export interface EmbeddedPostgresOptions {
  /**
   * For a data folder without a database yet: a prepared database (a gzipped tar of a database
   * folder, see fresh-database-snapshot.ts; PGlite's initdb takes seconds) to fill the empty
   * database folder with. Unpacked on the database thread while PGlite's WASM compiles, not on
   * this one. A seed that fails to unpack or does not open is removed and the folder
   * initialized as usual.
   */
  seed?: string;
  /** Told when the database thread fails or ends after it opened (the server cannot go on without it). */
  onFailure?: (err: Error) => void;
}

/**
 * PGlite (Postgres compiled to WASM) served over the Postgres wire protocol on a private unix
 * socket, so the normal `pg` driver, TypeORM and BullMQ's Postgres backend work unchanged. It
 * runs on a worker thread of its own (embedded-postgres.worker.ts): on the server's event loop
 * it took about half the CPU of an agent turn, in the way of requests and the WebSocket relay.
 * The socket server holds PGlite's single session for a whole transaction, which keeps
 * concurrent transactions isolated.
 */
export class EmbeddedPostgres {
  private readonly dumps = new Map<number, { resolve(blob: Blob): void; reject(err: Error): void }>();
  private nextDump = 0;
  private stopping: Promise<void> | null = null;
  private ended = false;

  private constructor(
    private readonly worker: Worker,
    private readonly socketDir: string,
    readonly url: string,
    /** The thread PGlite runs on, as it reported itself (never the main thread). */
    readonly thread: { threadId: number; isMainThread: boolean },
    private readonly onFailure: (err: Error) => void,
  ) {
    worker.on('message', (message: FromWorker) => {
      if (message.type !== 'dump') return;
      const pending = this.dumps.get(message.id);
      this.dumps.delete(message.id);
      if (message.data) pending?.resolve(new Blob([message.data], { type: message.mime ?? '' }));
      else pending?.reject(new Error(`embedded database dump failed: ${message.error ?? 'unknown error'}`));
    });
    worker.on('error', (err: unknown) =>
      this.end(new Error(`embedded database thread failed: ${describeError(err)}`, { cause: err })),
    );
    worker.on('exit', (code) => this.end(new Error(`embedded database thread exited (code ${code})`)));
  }

  static async start(dataDir: string, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
    // Folders of killed processes (their sockets answer no more) would pile up in /tmp. Checked
    // while the database opens: it never touches a folder as young as the one made below.
    const cleanup = removeStaleSocketFolders().catch(() => 0);
    const dbDir = join(dataDir, 'db');
    const fresh = !existsSync(dbDir) || readdirSync(dbDir).length === 0;
    mkdirSync(dbDir, { recursive: true });
    // A short private directory: unix socket paths are limited to ~107 bytes.
    const socketDir = mkdtempSync(join(tmpdir(), SOCKET_FOLDER_PREFIX));
    const data: EmbeddedWorkerData = {
      dbDir,
      socketPath: join(socketDir, SOCKET_NAME),
      maxConnections: MAX_CONNECTIONS,
    };
    const worker = new Worker(new URL('./embedded-postgres.worker.js', import.meta.url), {
      workerData: data,
      resourceLimits: { maxYoungGenerationSizeMb: DATABASE_THREAD_YOUNG_GENERATION_MB },
    });
    try {
      const opened = whenOpened(worker);
      worker.postMessage({ type: 'open', seed: fresh ? (options.seed ?? null) : null } satisfies ToWorker);
      const thread = await opened;
      await cleanup;
      const url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
      return new EmbeddedPostgres(worker, socketDir, url, thread, options.onFailure ?? (() => undefined));
    } catch (err) {
      await worker.terminate();
      rmSync(socketDir, { recursive: true, force: true });
      await cleanup;
      throw err;
    }
  }

  /**
   * A consistent copy of the database files (a gzipped tar of PGlite's data folder, as
   * `dumpDataDir('gzip')` makes it), taken between queries of its single session, so it can
   * run while the server serves.
   */
  dump(): Promise<Blob> {
    if (this.ended || this.stopping) return Promise.reject(new Error('the embedded database is stopped'));
    const id = this.nextDump++;
    return new Promise<Blob>((resolve, reject) => {
      this.dumps.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'dump', id } satisfies ToWorker);
    });
  }

  /** Closes PGlite cleanly (what keeps the data folder consistent), then ends its thread. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (!this.ended) {
        const stopped = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
          const done = (): void => {
            clearTimeout(timer);
            resolve();
          };
          this.worker.on('message', (m: FromWorker) => {
            if (m.type === 'stopped') done();
          });
          this.worker.once('exit', done);
        });
        this.worker.postMessage({ type: 'stop' } satisfies ToWorker);
        await stopped;
        this.ended = true;
        await this.worker.terminate();
      }
      rmSync(this.socketDir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  /** The thread failed or ended: pending dumps fail, and the owner hears of it unless it was stopping. */
  private end(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    for (const pending of this.dumps.values()) pending.reject(err);
    this.dumps.clear();
    if (!this.stopping) this.onFailure(err);
  }
}

/** Resolves with the worker's own thread once PGlite is open and served; rejects on whatever stops it first. */
function whenOpened(worker: Worker): Promise<{ threadId: number; isMainThread: boolean }> {
  return new Promise((resolve, reject) => {
    const settle = (fn: () => void): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      fn();
    };
    const onMessage = (message: FromWorker): void => {
      if (message.type === 'ready') {
        settle(() => resolve({ threadId: message.threadId, isMainThread: message.isMainThread }));
      } else if (message.type === 'failed') {
        const err = new Error(`the embedded database did not open: ${message.message}`);
        if (message.stack) err.stack = `${err.message}\n  (in its thread) ${message.stack}`;
        settle(() => reject(err));
      }
    };
    const onError = (err: unknown): void =>
      settle(() =>
        reject(new Error(`the embedded database thread failed while opening: ${describeError(err)}`, { cause: err })),
      );
    const onExit = (code: number): void =>
      settle(() => reject(new Error(`the embedded database thread exited (code ${code}) before it opened`)));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
