import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import pg from 'pg';
import { EmbeddedPostgres } from './embedded-postgres.js';
import { freshSnapshot } from './fresh-database-snapshot.js';

async function query(url: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/** A database folder that PGlite refuses to open (a data directory of an unknown Postgres version). */
function unopenable(dbDir: string): void {
  mkdirSync(dbDir, { recursive: true });
  writeFileSync(join(dbDir, 'PG_VERSION'), '99\n');
}

/** A seed (a gzipped ustar archive, as fresh-database-snapshot.ts reads it) holding such a folder. */
function unopenableSeed(file: string): void {
  const body = Buffer.from('99\n');
  const header = Buffer.alloc(512);
  header.write('PG_VERSION', 0);
  header.write(body.length.toString(8).padStart(11, '0'), 124);
  header.write('0', 156);
  const padding = Buffer.alloc(512 - body.length);
  writeFileSync(file, gzipSync(Buffer.concat([header, body, padding, Buffer.alloc(1024)])));
}

describe('EmbeddedPostgres', () => {
  it('runs PGlite on a worker thread, serves it on its socket, dumps it and closes it cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      const first = await EmbeddedPostgres.start(dir, { seed: freshSnapshot() ?? undefined });
      try {
        // The point of the worker: PGlite's CPU stays off the server's event loop.
        assert.equal(first.thread.isMainThread, false);
        assert.notEqual(first.thread.threadId, threadId);
        await query(first.url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$after restart$$)');
        const dump = Buffer.from(await (await first.dump()).arrayBuffer());
        assert.deepEqual([...dump.subarray(0, 2)], [0x1f, 0x8b], 'a gzip stream');
      } finally {
        await first.stop();
      }
      await assert.rejects(first.dump(), /stopped/);
      const second = await EmbeddedPostgres.start(dir);
      try {
        assert.deepEqual(await query(second.url, 'SELECT v FROM kept'), [{ v: 'after restart' }]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects start with the reason when the database does not open, and ends its thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      unopenable(join(dir, 'db'));
      await assert.rejects(EmbeddedPostgres.start(dir), /the embedded database did not open: .+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('initializes a new database when the seed does not unpack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      const seed = join(dir, 'seed.tar.gz');
      writeFileSync(seed, 'not gzip');
      const embedded = await EmbeddedPostgres.start(dir, { seed });
      try {
        assert.deepEqual(await query(embedded.url, 'SELECT 1 AS one'), [{ one: 1 }]);
      } finally {
        await embedded.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('initializes a new database when the seeded one does not open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      const seed = join(dir, 'seed.tar.gz');
      unopenableSeed(seed);
      const embedded = await EmbeddedPostgres.start(dir, { seed });
      try {
        assert.deepEqual(await query(embedded.url, 'SELECT 1 AS one'), [{ one: 1 }]);
      } finally {
        await embedded.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
