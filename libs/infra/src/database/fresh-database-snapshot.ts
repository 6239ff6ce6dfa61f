import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/**
 * A new embedded database, initialized and migrated once when the code is built (`npm run
 * build` runs this file), so the first start on a new data folder unpacks it instead of
 * running PGlite's initdb and every migration (ours and the job queue's). It is named after
 * the PGlite and BullMQ versions, the compiled migrations (names and contents) and the
 * embedded server's set-up: a missing or stale snapshot is ignored and the slow path runs.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const SNAPSHOT_DIR = join(HERE, 'snapshots');

/** An installed package's version (package.json files are not always exported). */
function packageVersion(name: string): string {
  for (let dir = dirname(createRequire(import.meta.url).resolve(name)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === name && pkg.version) return pkg.version;
  }
  throw new Error(`${name} package.json not found`);
}

function snapshotFile(): string {
  const hash = createHash('sha256').update(packageVersion('@electric-sql/pglite'));
  // The job queue's own schema (BullMQ's Postgres migrations) is in the snapshot too.
  hash.update(packageVersion('bullmq'));
  const migrations = join(HERE, 'migrations');
  for (const name of readdirSync(migrations)
    .filter((n) => n.endsWith('.js'))
    .sort()) {
    hash.update(name).update(readFileSync(join(migrations, name)));
  }
  hash.update(readFileSync(join(HERE, 'embedded-postgres.js')));
  hash.update(readFileSync(join(HERE, 'embedded-postgres.worker.js')));
  return join(SNAPSHOT_DIR, `fresh-${hash.digest('hex').slice(0, 16)}.tar.gz`);
}

/** This code's snapshot (a new, migrated database), or null when there is none (not built, or built for other migrations). */
export function freshSnapshot(): string | null {
  try {
    const file = snapshotFile();
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/**
 * Fills the empty folder `dbDir` with a snapshot (a gzipped tar of a database folder).
 * Unpacked here, natively: PGlite's own loader writes the files through its emulated file
 * system, slower.
 */
export function unpackSnapshot(file: string, dbDir: string): void {
  unpackTar(gunzipSync(readFileSync(file)), dbDir);
}

const BLOCK = 64 * 1024;
const ZEROS = Buffer.alloc(BLOCK);

/**
 * Writes `data`, leaving its all-zero blocks as holes: most of a new database is zeros (the
 * 16 MB WAL segment above all), and writing them is most of the time a copy takes.
 */
function writeSparse(path: string, data: Buffer): void {
  const fd = openSync(path, 'w', 0o600);
  try {
    for (let at = 0; at < data.length; at += BLOCK) {
      const block = data.subarray(at, Math.min(at + BLOCK, data.length));
      if (!block.equals(ZEROS.subarray(0, block.length))) writeSync(fd, block, 0, block.length, at);
    }
    ftruncateSync(fd, data.length);
  } finally {
    closeSync(fd);
  }
}

/** Regular files and folders of a ustar archive (what PGlite's dumpDataDir writes), under `into`. */
export function unpackTar(tar: Buffer, into: string): void {
  const text = (at: number, length: number): string => {
    const field = tar.subarray(at, at + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? length : end).toString('utf8');
  };
  for (let at = 0; at + 512 <= tar.length;) {
    const name = text(at, 100);
    if (name === '') break; // the zero blocks that end the archive
    const prefix = text(at + 345, 155);
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    const type = tar[at + 156];
    // Only plain relative parts: nothing may land outside the folder.
    const parts = `${prefix}/${name}`.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
    const path = join(into, ...parts);
    at += 512;
    if (type === 0x35 /* '5' directory */) mkdirSync(path, { recursive: true });
    else if ((type === 0x30 /* '0' */ || type === 0) && parts.length > 0) {
      mkdirSync(dirname(path), { recursive: true });
      writeSparse(path, tar.subarray(at, at + size));
    }
    at += Math.ceil(size / 512) * 512;
  }
}

/** Builds the snapshot unless this code's one is there; answers what it did. */
export async function buildFreshSnapshot(): Promise<string> {
  const file = snapshotFile();
  if (existsSync(file)) return `fresh database snapshot is current (${file})`;
  const { createDataSource, migrateUnderLock } = await import('./database.js');
  const { EmbeddedPostgres } = await import('./embedded-postgres.js');
  const dir = mkdtempSync(join(tmpdir(), 'svc-snapshot-'));
  try {
    const embedded = await EmbeddedPostgres.start(dir);
    try {
      const ds = createDataSource(embedded.url);
      await ds.initialize();
      await migrateUnderLock(ds);
      // BullMQ migrates its schema when the queue first connects (~0.4 s of DDL on PGlite):
      // done here, with the same backend the server uses, the start finds it current.
      const { BullJobQueue } = await import('../queue/bullmq-job-queue.js');
      const queue = new BullJobQueue({
        backend: { kind: 'postgres', url: embedded.url },
        declaredNames: [],
        concurrency: 1,
      });
      try {
        await queue.ping();
      } finally {
        await queue.close();
      }
      // Flushed, so a start replays no WAL before it opens.
      await ds.query('CHECKPOINT');
      await ds.destroy();
      const dump = Buffer.from(await (await embedded.dump()).arrayBuffer());
      mkdirSync(SNAPSHOT_DIR, { recursive: true });
      // Older snapshots belong to other migrations: gone.
      for (const old of readdirSync(SNAPSHOT_DIR)) rmSync(join(SNAPSHOT_DIR, old), { force: true });
      writeFileSync(`${file}.tmp`, dump);
      renameSync(`${file}.tmp`, file);
      return `fresh database snapshot built (${file}, ${(dump.length / 1e6).toFixed(1)} MB)`;
    } finally {
      await embedded.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `node dist/libs/infra/src/database/fresh-database-snapshot.js` (the build's last step): a
// failure leaves the slow first start, never a failed build.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildFreshSnapshot().then(
    (message) => {
      process.stdout.write(`${message}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`fresh database snapshot not built: ${(err as Error).message}\n`);
      process.exit(0);
    },
  );
}
