/**
 * Imported for its effect, first thing in main.ts: TypeORM loads only its Postgres driver in the
 * server's process (typeorm-postgres-only.ts says why and how).
 */
import { keepOnlyPostgresDriver } from './typeorm-postgres-only.js';

keepOnlyPostgresDriver();
