import { Module } from '@nestjs/common';
import { KnowledgeService } from '#core/knowledge/knowledge.service.js';
import { KnowledgeTurns } from '#core/knowledge/knowledge-turns.js';
import { KnowledgeLinkWatch } from '#core/knowledge/knowledge-link-watch.js';
import { ArtifactEventsModule } from './artifact-events.module.js';
import { ModelsModule } from './models.module.js';
import { SpacesModule } from './spaces.module.js';

/**
 * Knowledge bases (docs/api/knowledge.md): KnowledgeService over the KnowledgeRepository,
 * KnowledgeFiles, DocumentParser and Embeddings ports (bound by InfraModule) and the model
 * sources (ModelsModule) its embedding settings name; its ingestion jobs are
 * processed by JobProcessors in the worker role. KnowledgeLinkWatch keeps linked folders in step
 * with the watcher's change batches (ArtifactEventsModule).
 */
@Module({
  imports: [SpacesModule, ModelsModule, ArtifactEventsModule],
  providers: [KnowledgeService, KnowledgeTurns, KnowledgeLinkWatch],
  exports: [KnowledgeService, KnowledgeTurns],
})
export class KnowledgeModule {}
