import { StorageFaults } from '#core/ports/storage-faults.port.js';

/** SQLSTATE classes and codes that mean "the database cannot take this now", not "this is wrong". */
const UNAVAILABLE_SQLSTATES = new Set([
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '58030', // io_error
  '25006', // read_only_sql_transaction (a standby, or a volume remounted read-only)
]);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);
const UNAVAILABLE_TEXT =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|No space left on device|could not extend file|could not write/i;

/**
 * Whether a failure means the database is away (stopped, restarting, unreachable, disk
 * full, read-only) rather than that the statement was wrong. Looks through TypeORM's
 * QueryFailedError (`driverError`) and `cause` chains.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let current: unknown = err, hops = 0; current && hops < 5; hops++) {
    const e = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_ERRNOS.has(code)) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_TEXT.test(e.message)) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}

export class PgStorageFaults extends StorageFaults {
  isUnavailable(err: unknown): boolean {
    return isDatabaseUnavailable(err);
  }
}
