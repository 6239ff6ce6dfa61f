/**
 * Keeps TypeORM from loading the drivers of the databases the server never talks to.
 *
 * TypeORM's `DriverFactory` requires the driver of every database it supports when it is first
 * loaded (MySQL, SQL Server, SAP, Spanner, Oracle, MongoDB, the SQLite family and more: 36 modules,
 * 1.4 MB of source), whatever the `type` a `DataSource` names. The server only ever names
 * `postgres` (database.ts; PGlite is reached over the Postgres wire protocol), so those modules are
 * dead weight in the main thread's heap: their sources and function data stay there for the
 * process's life (docs/performance.md, "Memory").
 *
 * `keepOnlyPostgresDriver()` puts a placeholder for each of those drivers into Node's `require`
 * cache (`require.cache`, where adding entries is documented) before TypeORM is loaded, so
 * `DriverFactory`'s `require`s find the placeholder and never read the driver's file. Nothing on
 * disk is changed. A placeholder's constructor throws, naming this file, should a `DataSource` ever
 * name another database. Postgres's driver and the small shared modules (`MssqlParameter`, which
 * TypeORM's index exports) load as before.
 *
 * It must run before anything imports `typeorm`: main.ts imports `./typeorm-postgres-only-init.js`
 * right after `reflect-metadata`. Other entry points (tests, benches, scripts) load TypeORM whole,
 * as before. typeorm-postgres-only.spec.ts fails when a TypeORM upgrade adds a driver or moves one.
 */
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** `DriverFactory`'s requires other than Postgres's: file under `typeorm/driver/` → export name. */
export const SKIPPED_DRIVERS: Readonly<Record<string, string>> = {
  'aurora-mysql/AuroraMysqlDriver': 'AuroraMysqlDriver',
  'aurora-postgres/AuroraPostgresDriver': 'AuroraPostgresDriver',
  'better-sqlite3/BetterSqlite3Driver': 'BetterSqlite3Driver',
  'capacitor/CapacitorDriver': 'CapacitorDriver',
  'cockroachdb/CockroachDriver': 'CockroachDriver',
  'cordova/CordovaDriver': 'CordovaDriver',
  'expo/ExpoDriver': 'ExpoDriver',
  'mongodb/MongoDriver': 'MongoDriver',
  'mysql/MysqlDriver': 'MysqlDriver',
  'nativescript/NativescriptDriver': 'NativescriptDriver',
  'oracle/OracleDriver': 'OracleDriver',
  'react-native/ReactNativeDriver': 'ReactNativeDriver',
  'sap/SapDriver': 'SapDriver',
  'spanner/SpannerDriver': 'SpannerDriver',
  'sqljs/SqljsDriver': 'SqljsDriver',
  'sqlserver/SqlServerDriver': 'SqlServerDriver',
};

/** The folder of TypeORM's drivers, as `require` resolves it (symbolic links resolved). */
export function typeormDriverFolder(): string {
  return join(dirname(createRequire(import.meta.url).resolve('typeorm')), 'driver');
}

/**
 * Puts the placeholders into the `require` cache. Returns how many it put there: 0 when TypeORM's
 * driver factory was already loaded (too late to matter) or a placeholder is already in place.
 */
export function keepOnlyPostgresDriver(): number {
  const folder = typeormDriverFolder();
  const cache = createRequire(import.meta.url).cache;
  if (cache[join(folder, 'DriverFactory.js')] !== undefined) return 0;
  let placed = 0;
  for (const [path, name] of Object.entries(SKIPPED_DRIVERS)) {
    const filename = join(folder, `${path}.js`);
    if (cache[filename] !== undefined) continue;
    const placeholder = new Module(filename);
    placeholder.filename = filename;
    placeholder.loaded = true;
    placeholder.exports = {
      [name]: class {
        constructor() {
          throw new Error(
            `TypeORM's ${name} is not loaded in this process: the server loads only the Postgres driver ` +
              '(libs/infra/src/database/typeorm-postgres-only.ts)',
          );
        }
      },
    };
    cache[filename] = placeholder;
    placed++;
  }
  return placed;
}
