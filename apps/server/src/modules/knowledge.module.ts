import { Module } from '@nestjs/common';
import { KnowledgeService } from '#core/knowledge/knowledge.service.js';
import { KnowledgeTurns } from '#core/knowledge/knowledge-turns.js';
import { SpacesModule } from './spaces.module.js';

/**
 * Knowledge bases (docs/api/knowledge.md): KnowledgeService over the KnowledgeRepository,
 * KnowledgeFiles and DocumentParser ports (bound by InfraModule); its ingestion jobs are
 * processed by JobProcessors in the worker role.
 */
@Module({
  imports: [SpacesModule],
  providers: [KnowledgeService, KnowledgeTurns],
  exports: [KnowledgeService, KnowledgeTurns],
})
export class KnowledgeModule {}
