import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * pglite-socket 0.2.17 queues each wire-protocol message on its own and keeps one client's
 * messages together only inside an SQL transaction. A parameterized query is several
 * messages (Parse, Bind, Describe, Execute, then Sync), so two clients querying at once
 * interleave them on PGlite's single session: wrong rows, "portal does not exist", and,
 * because a failed message returns without clearing its `processing` flag, a queue that
 * hangs for good (upstream electric-sql/pglite#1046, open).
 *
 * This replaces the queue's scheduler: a client that sent an extended-protocol message owns
 * the session until its Sync (or a simple Query); SQL transactions stay with their client as
 * before; the flag is always cleared. The library version is pinned exactly, and the private
 * shape is checked here so an upgrade fails loudly instead of silently losing isolation.
 */

/** Extended-protocol messages that leave an exchange open until Sync: Parse, Bind, Describe, Execute, Close, Flush. */
const OPENS_EXCHANGE = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]);

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  onData(data: Uint8Array): void;
  resolve(bytes: number): void;
  reject(error: Error): void;
}

interface QueryQueue {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: {
    isInTransaction(): boolean;
    runExclusive<T>(fn: () => Promise<T>): Promise<T>;
    execProtocolRawStream(message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }): Promise<unknown>;
  };
  processQueue(): Promise<void>;
  clearTransactionIfNeeded(handlerId: number): Promise<void>;
}

export function serializeProtocolExchanges(server: PGLiteSocketServer): void {
  const queue = (server as unknown as { queryQueue?: QueryQueue }).queryQueue;
  if (
    !queue ||
    !Array.isArray(queue.queue) ||
    typeof queue.processQueue !== 'function' ||
    typeof queue.clearTransactionIfNeeded !== 'function' ||
    typeof queue.db?.execProtocolRawStream !== 'function'
  ) {
    throw new Error('pglite-socket internals changed: review libs/infra/src/database/pglite-socket-serialization.ts');
  }
  let owner: number | null = null;

  queue.processQueue = async function processQueue(this: QueryQueue): Promise<void> {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const sticky = owner ?? (this.db.isInTransaction() ? this.lastHandlerId : null);
        const index = sticky === null ? 0 : this.queue.findIndex((q) => q.handlerId === sticky);
        if (index === -1) break; // the owner's next message has not arrived yet
        const item = this.queue.splice(index, 1)[0]!;
        // The session stays with this client until its exchange ends, even if this message failed:
        // after an error Postgres ignores everything up to Sync, whoever sends it.
        owner = OPENS_EXCHANGE.has(item.message[0]!) ? item.handlerId : null;
        this.lastHandlerId = item.handlerId;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (err) {
          item.reject(err as Error);
          continue;
        }
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };

  const clearTransaction = queue.clearTransactionIfNeeded.bind(queue);
  queue.clearTransactionIfNeeded = async (handlerId: number): Promise<void> => {
    // A client that went away mid-exchange releases the session.
    if (owner === handlerId) owner = null;
    await clearTransaction(handlerId);
    await queue.processQueue();
  };
}
