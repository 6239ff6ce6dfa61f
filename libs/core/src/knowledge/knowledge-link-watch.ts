import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ARTIFACT_CHANGED_BATCH, type ArtifactChangeBatchEvent } from '#contracts/artifacts.js';
import { ArtifactWatchService } from '../artifacts/artifact-watch.service.js';
import { EventBus } from '../ports/event-bus.port.js';
import { KnowledgeService } from './knowledge.service.js';

/** A link is read again this long after the last change reported under it (a burst is one sync). */
export const LINK_SYNC_QUIET_MS = 1_000;

/**
 * Linked folders kept in step (docs/api/knowledge.md, "Linked folders"): the replica holding the
 * file-watch lease (whose watcher published the change batch) finds the links under which a
 * change lies and, once the burst is quiet, syncs each (new and changed files ingested, removed
 * ones dropped with their chunks). Other replicas hear the same batches and ignore them, so one
 * replica watches; the sync's ingestion jobs run on any.
 */
@Injectable()
export class KnowledgeLinkWatch implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Knowledge');
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly syncing = new Map<string, Promise<void>>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly watch: ArtifactWatchService,
    private readonly knowledge: KnowledgeService,
    private readonly bus: EventBus,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel !== ARTIFACT_CHANGED_BATCH || !this.watch.isLeader()) return;
      void this.onBatch(event.data as unknown as ArtifactChangeBatchEvent).catch((err: Error) =>
        this.logger.warn({ msg: 'linked folder change handling failed', error: err.message }),
      );
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async onBatch(event: ArtifactChangeBatchEvent): Promise<void> {
    if (event.changes.length === 0 && !event.resync) return;
    const links = await this.knowledge.linksInSpace(event.spaceId);
    for (const link of links) {
      const under = (rel: string) => link.path === '' || rel === link.path || rel.startsWith(`${link.path}/`);
      if (event.resync || event.changes.some((c) => under(c.relativePath))) this.schedule(link.id);
    }
  }

  private schedule(linkId: string): void {
    clearTimeout(this.timers.get(linkId));
    this.timers.set(
      linkId,
      setTimeout(() => {
        this.timers.delete(linkId);
        // One sync per link at a time; a change during one schedules the next after it.
        const previous = this.syncing.get(linkId) ?? Promise.resolve();
        const next = previous
          .then(() => this.knowledge.syncLink(linkId))
          .catch((err: Error) => this.logger.warn({ msg: 'linked folder sync failed', linkId, error: err.message }))
          .finally(() => {
            if (this.syncing.get(linkId) === next) this.syncing.delete(linkId);
          });
        this.syncing.set(linkId, next);
      }, LINK_SYNC_QUIET_MS),
    );
  }
}
