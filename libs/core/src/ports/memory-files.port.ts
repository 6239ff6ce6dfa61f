import type { MemoryState } from '#contracts/spaces.js';
import type { GuardedPath } from './file-store.port.js';

/** What the memory files of a working folder say (`.svc/memory.md`, `.svc/memory/`). */
export type MemoryFilesStatus = Omit<MemoryState, 'consolidating'>;

export abstract class MemoryFiles {
  abstract readStatus(workingFolder: string): Promise<MemoryFilesStatus>;
  /**
   * Removes a memory-internal entry (a topic page, a snapshot folder) recursively. The
   * adapter refuses anything that does not lie strictly inside the space's `.svc/memory/`;
   * a missing entry is fine. Everything else is written through the FileStore.
   */
  abstract removeInternal(target: GuardedPath): Promise<void>;
}

/** Whether a consolidation is running (or queued) for a space. */
export abstract class ConsolidationStatus {
  abstract isConsolidating(spaceId: string): Promise<boolean>;
}

export class NoConsolidation extends ConsolidationStatus {
  async isConsolidating(): Promise<boolean> {
    return false;
  }
}

/**
 * One lease per space, shared by every replica (Redis `SET NX PX` when Redis is used, a
 * map in this process otherwise). The holder is named by a token (the job id of the run);
 * a lease nobody renews expires after its ttl, so a dead replica cannot block a space for
 * long. Holding it is what `isConsolidating` reports.
 */
export abstract class ConsolidationLock extends ConsolidationStatus {
  /** Takes the lease when nobody holds it; false when someone (this token included) does. */
  abstract acquire(spaceId: string, token: string, ttlMs: number): Promise<boolean>;
  /** Takes the lease when free or already held by `token` (then extends it); false when another token holds it. */
  abstract claim(spaceId: string, token: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease while `token` still holds it; false when it was lost. */
  abstract renew(spaceId: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease back when `token` still holds it; never throws. */
  abstract release(spaceId: string, token: string): Promise<void>;
}
