import { Module } from '@nestjs/common';
import {
  ARTIFACT_SEARCH_OPTIONS,
  type ArtifactSearchOptions,
  ArtifactSearchService,
} from '#core/artifacts/artifact-search.service.js';
import { ArtifactWatchService } from '#core/artifacts/artifact-watch.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { SpacesModule } from './spaces.module.js';

/**
 * File change events and file search. The watcher runs in every role (one replica at a
 * time, the lease holder, watches every space); the search index lives in the replicas that
 * serve HTTP, built on demand. The watcher, scanner and lease adapters are bound by InfraModule.
 */
@Module({
  imports: [SpacesModule],
  providers: [
    {
      provide: ARTIFACT_SEARCH_OPTIONS,
      useFactory: (config: AppConfig): ArtifactSearchOptions => ({ indexLimit: config.searchIndexLimit }),
      inject: [APP_CONFIG],
    },
    ArtifactWatchService,
    ArtifactSearchService,
  ],
  exports: [ArtifactWatchService, ArtifactSearchService],
})
export class ArtifactEventsModule {}
