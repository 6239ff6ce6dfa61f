import { hostname } from 'node:os';
import { Module } from '@nestjs/common';
import {
  ARTIFACT_SEARCH_OPTIONS,
  type ArtifactSearchOptions,
  ArtifactSearchService,
} from '#core/artifacts/artifact-search.service.js';
import { ArtifactWatchService } from '#core/artifacts/artifact-watch.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { FileTreeScanner, FileWatcher } from '#core/ports/file-watcher.port.js';
import { LeaderLease } from '#core/ports/leader-lease.port.js';
import { AppLogger } from '#infra/logging/logger.js';
import { ChokidarFileWatcher } from '#infra/watch/chokidar-file-watcher.js';
import { LocalLeaderLease } from '#infra/watch/local-leader-lease.js';
import { NodeFileTreeScanner } from '#infra/watch/node-file-tree-scanner.js';
import { RedisLeaderLease } from '#infra/watch/redis-leader-lease.js';
import { SpacesModule } from '../spaces/spaces.module.js';
import { ArtifactSearchController } from './artifact-search.controller.js';
import { type ArtifactEventsSettings, artifactEventsSettings } from './artifact-events.settings.js';

const SETTINGS = Symbol('ARTIFACT_EVENTS_SETTINGS');

/**
 * File change events and file search. The watcher runs in every role (one replica at a
 * time, the lease holder, watches every space); the search index lives in the replicas that
 * serve HTTP, built on demand. With Redis the lease is in Redis; without it this process is
 * the only one on its data folder and always leads.
 */
@Module({
  imports: [SpacesModule],
  controllers: [ArtifactSearchController],
  providers: [
    { provide: SETTINGS, useFactory: (config: AppConfig) => artifactEventsSettings(config), inject: [APP_CONFIG] },
    {
      provide: FileWatcher,
      useFactory: (settings: ArtifactEventsSettings) =>
        new ChokidarFileWatcher({ usePolling: settings.fileWatchPolling }),
      inject: [SETTINGS],
    },
    { provide: FileTreeScanner, useFactory: () => new NodeFileTreeScanner() },
    {
      provide: LeaderLease,
      useFactory: (config: AppConfig, logger: AppLogger) =>
        config.redisUrl === null
          ? new LocalLeaderLease()
          : new RedisLeaderLease(config.redisUrl, config.redisPrefix, `${hostname()}-${process.pid}`, logger),
      inject: [APP_CONFIG, AppLogger],
    },
    {
      provide: ARTIFACT_SEARCH_OPTIONS,
      useFactory: (settings: ArtifactEventsSettings): ArtifactSearchOptions => ({
        indexLimit: settings.searchIndexLimit,
      }),
      inject: [SETTINGS],
    },
    ArtifactWatchService,
    ArtifactSearchService,
  ],
  exports: [ArtifactWatchService, ArtifactSearchService],
})
export class ArtifactEventsModule {}
