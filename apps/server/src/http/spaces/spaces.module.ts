import { Module } from '@nestjs/common';
import { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import { MemoryService } from '#core/memory/memory.service.js';
import { SpacesService } from '#core/spaces/spaces.service.js';
import { AppsModule } from '../apps/apps.module.js';
import { FilesModule } from '../artifacts/files.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ModelsModule } from '../models/models.module.js';
import { SpacesController } from './spaces.controller.js';

/**
 * Spaces, their memory (state, consolidation) and preferences. Exports SpacesService to the
 * file contexts and MemoryConsolidationService to the job processors and the agent engine.
 */
@Module({
  imports: [AppsModule, ConversationsModule, FilesModule, ModelsModule],
  controllers: [SpacesController],
  providers: [SpacesService, MemoryService, MemoryConsolidationService],
  exports: [SpacesService, MemoryService, MemoryConsolidationService],
})
export class SpacesModule {}
