import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { describeError } from '../logging/describe-error.js';
import { unpackSnapshot } from './fresh-database-snapshot.js';
import { serializeProtocolExchanges } from './pglite-socket-serialization.js';

/**
 * The embedded database's own thread (started by EmbeddedPostgres): PGlite and the socket
 * server that serves it run here, off the server's event loop, which they would otherwise
 * share with HTTP requests and the WebSocket relay.
 */

export interface EmbeddedWorkerData {
  dbDir: string;
  socketPath: string;
  maxConnections: number;
}

/** Main thread → worker. */
export type ToWorker = { type: 'open'; seed: string | null } | { type: 'dump'; id: number } | { type: 'stop' };

/** Worker → main thread. */
export type FromWorker =
  | { type: 'ready'; threadId: number; isMainThread: boolean }
  | { type: 'failed'; message: string; stack?: string }
  | { type: 'dump'; id: number; data?: ArrayBuffer; mime?: string; error?: string }
  | { type: 'stopped' };

const port = parentPort;
if (!port) throw new Error('embedded-postgres.worker runs only as a worker thread');
const { dbDir, socketPath, maxConnections } = workerData as EmbeddedWorkerData;
const send = (message: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;
/** Node's global WebAssembly (this project's `lib` setting does not declare it). */
const { WebAssembly: wasmApi } = globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };
};

/**
 * Postgres's shared buffers inside PGlite's WASM memory. initdb's default, 128 MB, was touched in
 * full at start (measured: 288 MB RSS for PGlite open with it, 162 MB with 16 MB) and made most of
 * the embedded server's idle RSS; an embedded database is small and its files stay in the OS page
 * cache, so a page not in these buffers is a read from memory, not from disk.
 */
const SHARED_BUFFERS = '16MB';
const START_PARAMS = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`];

let db: PGlite | null = null;
let server: PGLiteSocketServer | null = null;

port.on('message', (message: ToWorker) => {
  if (message.type === 'open') void open(message.seed);
  else if (message.type === 'dump') void dump(message.id);
  else if (message.type === 'stop') void stop();
});

async function open(seed: string | null): Promise<void> {
  try {
    // The WASM compiles on V8's own threads while the seed unpacks on this one.
    const wasm = compilePglite();
    const seeded = seed !== null && seedFolder(seed);
    db = await openDatabase(seeded, await wasm);
    // BullMQ's Postgres backend pins search_path with a startup option the socket server
    // ignores; one shared session means setting it once here serves every client.
    await db.exec('CREATE SCHEMA IF NOT EXISTS bullmq; SET search_path TO public, bullmq');
    server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
    serializeProtocolExchanges(server);
    await server.start();
    send({ type: 'ready', threadId, isMainThread });
  } catch (err) {
    await server?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    // PGlite throws plain objects too (Emscripten's ErrnoError): describe, never "[object Object]".
    send({ type: 'failed', message: describeError(err), stack: err instanceof Error ? err.stack : undefined });
  }
}

/** PGlite's WASM module, compiling (undefined when it cannot be read here: PGlite then loads it itself). */
function compilePglite(): Promise<WasmModule | undefined> {
  try {
    // Read synchronously so the compile starts now, before the seed holds this thread.
    const bytes = readFileSync(new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
    return wasmApi.compile(bytes).catch(() => undefined);
  } catch {
    return Promise.resolve(undefined);
  }
}

/** Unpacks the seed into the empty database folder; one that fails leaves the folder empty for initdb. */
function seedFolder(seed: string): boolean {
  try {
    unpackSnapshot(seed, dbDir);
    return true;
  } catch {
    emptyDbDir();
    return false;
  }
}

function emptyDbDir(): void {
  rmSync(dbDir, { recursive: true, force: true });
  mkdirSync(dbDir, { recursive: true });
}

async function openDatabase(seeded: boolean, pgliteWasmModule: WasmModule | undefined): Promise<PGlite> {
  if (seeded) {
    try {
      return await PGlite.create(dbDir, { pgliteWasmModule, startParams: START_PARAMS });
    } catch {
      // A seed this PGlite cannot open: start over with initdb.
      emptyDbDir();
    }
  }
  return PGlite.create(dbDir, { pgliteWasmModule, startParams: START_PARAMS });
}

/** A gzipped tar of the data folder, taken between queries of PGlite's single session. */
async function dump(id: number): Promise<void> {
  try {
    if (!db) throw new Error('the embedded database is not open');
    const blob = await db.dumpDataDir('gzip');
    const data = await blob.arrayBuffer();
    send({ type: 'dump', id, data, mime: blob.type }, [data]);
  } catch (err) {
    send({ type: 'dump', id, error: describeError(err) });
  }
}

/** A clean close (PGlite checkpoints and shuts down) keeps the data folder consistent. */
async function stop(): Promise<void> {
  await server?.stop().catch(() => undefined);
  await db?.close().catch(() => undefined);
  server = null;
  db = null;
  send({ type: 'stopped' });
}
