import { Module } from '@nestjs/common';
import { AgentService } from '#core/agent/agent.service.js';
import { ConversationEvents } from '#core/agent/conversation-events.js';
import { ToolRegistry } from '#core/agent/tool-registry.js';
import { TurnReaper } from '#core/agent/turn-reaper.js';
import { TurnRunner } from '#core/agent/turn-runner.js';
import { FilesModule } from '../artifacts/files.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ModelsModule } from '../models/models.module.js';
import { SpacesModule } from '../spaces/spaces.module.js';
import { AgentController } from './agent.controller.js';

/** The assistant: accepting messages (api role) and running turns (worker role). */
@Module({
  imports: [SpacesModule, ConversationsModule, ModelsModule, FilesModule],
  controllers: [AgentController],
  providers: [AgentService, TurnRunner, TurnReaper, ToolRegistry, ConversationEvents],
  exports: [AgentService, TurnRunner, TurnReaper, ConversationEvents],
})
export class AgentModule {}
