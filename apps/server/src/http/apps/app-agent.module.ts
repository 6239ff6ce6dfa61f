import { Module } from '@nestjs/common';
import { AppChatPlanBuilder } from '#core/apps/agent/app-chat-plan-builder.js';
import { AppChatService } from '#core/apps/agent/app-chat.service.js';
import { AppData } from '#core/apps/app-data.js';
import { FilesModule } from '../artifacts/files.module.js';
import { AgentModule } from '../agent/agent.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { ModelsModule } from '../models/models.module.js';
import { SpacesModule } from '../spaces/spaces.module.js';
import { AppChatController } from './app-chat.controller.js';
import { AppsModule } from './apps.module.js';

/**
 * A digital human at work: its chat threads (turns of kind `app-chat`). Registers its plan
 * builders with the agent engine in every role, so any worker can run its turns.
 */
@Module({
  imports: [AppsModule, AgentModule, SpacesModule, ConversationsModule, ModelsModule, FilesModule],
  controllers: [AppChatController],
  providers: [AppChatService, AppChatPlanBuilder, AppData],
})
export class AppAgentModule {}
