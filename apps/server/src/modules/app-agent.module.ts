import { Module } from '@nestjs/common';
import { AppChatPlanBuilder } from '#core/apps/agent/app-chat-plan-builder.js';
import { AppChatService } from '#core/apps/agent/app-chat.service.js';
import { AppChannelChat } from '#core/apps/agent/app-channel-chat.js';
import { ChannelChat } from '#core/ports/channel-chat.port.js';
import { AppRunPlanBuilder } from '#core/apps/agent/app-run-plan-builder.js';
import { AppRunsService } from '#core/apps/agent/app-runs.service.js';
import { AppWork } from '#core/apps/agent/app-work.js';
import { EscalationAnswers } from '#core/apps/agent/escalation-answers.js';
import { RunSlots } from '#core/apps/agent/run-slots.js';
import { AppData } from '#core/apps/app-data.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { AgentModule } from './agent.module.js';
import { AppsModule } from './apps.module.js';
import { ConversationsModule } from './conversations.module.js';
import { ModelsModule } from './models.module.js';
import { KnowledgeModule } from './knowledge.module.js';
import { SpacesModule } from './spaces.module.js';

/**
 * A digital human at work: its chat threads (turns of kind `app-chat`), its runs (`app-run`,
 * started by `AppRunsService.startRun`, the seam triggers use) and escalations. Registers its plan
 * builders with the agent engine in every role, so any worker can run its turns.
 */
@Module({
  imports: [AppsModule, AgentModule, SpacesModule, ConversationsModule, ModelsModule, KnowledgeModule],
  providers: [
    AppChatService,
    AppChatPlanBuilder,
    AppRunsService,
    AppRunPlanBuilder,
    AppWork,
    AppData,
    EscalationAnswers,
    AppChannelChat,
    { provide: ChannelChat, useExisting: AppChannelChat },
    {
      provide: RunSlots,
      useFactory: (config: AppConfig) => new RunSlots(config.appRunsPerProcess),
      inject: [APP_CONFIG],
    },
  ],
  exports: [AppRunsService, AppChatService, EscalationAnswers, ChannelChat],
})
export class AppAgentModule {}
