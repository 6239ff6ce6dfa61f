import { Module } from '@nestjs/common';
import { ModelSourcesService } from '#core/models/model-sources.service.js';

/**
 * Model sources and the configuration object. Exports ModelSourcesService, which the agent
 * engine uses to resolve a conversation's source and model (`resolveForConversation`).
 * Seeds the SVC_AI_* source at start (every role; the seed is idempotent).
 */
@Module({
  providers: [ModelSourcesService],
  exports: [ModelSourcesService],
})
export class ModelsModule {}
