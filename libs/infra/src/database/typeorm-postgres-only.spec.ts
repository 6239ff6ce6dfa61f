import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { keepOnlyPostgresDriver, SKIPPED_DRIVERS, typeormDriverFolder } from './typeorm-postgres-only.js';

describe('TypeORM with only its Postgres driver', () => {
  it('loads no other database driver, and a DataSource naming another database says why', async () => {
    // This file runs in a process of its own (node --test): TypeORM is not loaded yet.
    assert.equal(keepOnlyPostgresDriver(), Object.keys(SKIPPED_DRIVERS).length);
    const { DataSource } = await import('typeorm');
    assert.equal(keepOnlyPostgresDriver(), 0, 'once TypeORM is loaded, nothing more is placed');

    const folder = typeormDriverFolder();
    const placeholders = new Set(Object.keys(SKIPPED_DRIVERS).map((p) => `${p}.js`.split('/').join(sep)));
    const loaded = Object.keys(createRequire(import.meta.url).cache)
      .filter((file) => file.startsWith(folder + sep))
      .map((file) => relative(folder, file));
    assert.ok(loaded.includes(['postgres', 'PostgresDriver.js'].join(sep)), 'the Postgres driver is loaded');
    // Only Postgres's folder, the shared types, the placeholders and TypeORM's exported
    // MssqlParameter; a new driver in a TypeORM upgrade shows up here (add it to SKIPPED_DRIVERS).
    const unexpected = loaded.filter(
      (file) =>
        file.includes(sep) &&
        !placeholders.has(file) &&
        !file.startsWith(`postgres${sep}`) &&
        !file.startsWith(`types${sep}`) &&
        file !== ['sqlserver', 'MssqlParameter.js'].join(sep),
    );
    assert.deepEqual(unexpected, []);

    const postgres = new DataSource({ type: 'postgres', url: 'postgres://127.0.0.1:1/none' });
    assert.equal(postgres.driver.constructor.name, 'PostgresDriver');
    assert.throws(
      () => new DataSource({ type: 'mysql', url: 'mysql://127.0.0.1:1/none' }),
      /MysqlDriver is not loaded in this process: the server loads only the Postgres driver/,
    );
  });
});
