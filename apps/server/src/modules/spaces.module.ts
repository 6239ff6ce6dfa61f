import { Module } from '@nestjs/common';
import { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import { MemoryService } from '#core/memory/memory.service.js';
import { SpacesService } from '#core/spaces/spaces.service.js';
import { AppsModule } from './apps.module.js';
import { ConversationsModule } from './conversations.module.js';
import { ModelsModule } from './models.module.js';

/**
 * Spaces, their memory (state, consolidation) and preferences. Exports SpacesService to the
 * file contexts and MemoryConsolidationService to the job processors and the agent engine.
 */
@Module({
  imports: [AppsModule, ConversationsModule, ModelsModule],
  providers: [SpacesService, MemoryService, MemoryConsolidationService],
  exports: [SpacesService, MemoryService, MemoryConsolidationService],
})
export class SpacesModule {}
