import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Ids that say what a log line belongs to (request, job, turn), carried through async
 * calls so code deep inside a request or job need not pass them along. Every log line
 * written inside `runWithLogContext` gets these fields.
 */
export type LogContext = Readonly<{ reqId?: string; jobId?: string; job?: string; turnId?: string }>;

const storage = new AsyncLocalStorage<LogContext>();

export function runWithLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, fn);
}

export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
