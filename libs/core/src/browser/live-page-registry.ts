import type { BrowserLivePage } from '#contracts/browser.js';

/** What one replica holds: the pages it lists and every view id it can serve (sign-in pages too). */
export interface ReplicaPages {
  replica: string;
  pages: BrowserLivePage[];
  views: string[];
}

/**
 * The deployment's live pages by holding replica (docs/api/ai-browser-views.md, "Replicas").
 * Each replica announces what it holds on a heartbeat; an announcement is a lease that lapses
 * unless renewed, so a replica that dies drops out of the list within the lease's lifetime.
 */
export abstract class LivePageRegistry {
  /** How long an announcement counts without being renewed. */
  abstract readonly leaseMs: number;
  /** Replaces what `holding.replica` announced before. */
  abstract announce(holding: ReplicaPages): Promise<void>;
  /** The announcements of every replica whose lease has not lapsed. */
  abstract all(): Promise<ReplicaPages[]>;
  /** The replica stops (shutdown): its announcement goes at once. */
  abstract withdraw(replica: string): Promise<void>;
}
