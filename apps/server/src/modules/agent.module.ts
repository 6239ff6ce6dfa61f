import { Module } from '@nestjs/common';
import { AgentService } from '#core/agent/agent.service.js';
import { ChatPlanBuilder } from '#core/agent/chat-plan-builder.js';
import { ConversationTitles } from '#core/agent/conversation-titles.js';
import { MessageAttachments } from '#core/agent/message-attachments.js';
import { TurnPreamble } from '#core/agent/turn-preamble.js';
import { ConversationEvents } from '#core/agent/conversation-events.js';
import { ConversationToolsets } from '#core/agent/conversation-toolsets.js';
import { RecordRetry } from '#core/agent/record-retry.js';
import { AgentLoop } from '#core/agent/engine/agent-loop.js';
import { ToolRegistry } from '#core/agent/tool-registry.js';
import { TurnReaper } from '#core/agent/turn-reaper.js';
import { TurnPlanBuilders } from '#core/agent/turn-plan-builders.js';
import { TurnRunner } from '#core/agent/turn-runner.js';
import { ModelSourceTester } from '#core/models/model-source-tester.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { Clock } from '#core/ports/clock.port.js';
import { ModelProvider } from '#core/ports/model-provider.port.js';
import { BrowserModule } from './browser.module.js';
import { ApprovalsModule } from './approvals.module.js';
import { ConversationsModule } from './conversations.module.js';
import { McpModule } from './mcp.module.js';
import { ModelsModule } from './models.module.js';
import { SkillsModule } from './skills.module.js';
import { KnowledgeModule } from './knowledge.module.js';
import { SpacesModule } from './spaces.module.js';

/**
 * The assistant: accepting messages (api role) and running turns (worker role). Other
 * contexts add turn kinds by registering a plan builder with TurnPlanBuilders, assembling
 * tool sets from ToolRegistry's built-ins.
 */
@Module({
  imports: [
    SpacesModule,
    ConversationsModule,
    ModelsModule,
    McpModule,
    SkillsModule,
    ApprovalsModule,
    BrowserModule,
    KnowledgeModule,
  ],
  providers: [
    AgentService,
    TurnRunner,
    TurnReaper,
    ToolRegistry,
    ConversationEvents,
    ConversationToolsets,
    RecordRetry,
    ChatPlanBuilder,
    ConversationTitles,
    MessageAttachments,
    TurnPlanBuilders,
    TurnPreamble,
    ModelSourceTester,
    {
      provide: AgentLoop,
      useFactory: (provider: ModelProvider, clock: Clock, config: AppConfig) =>
        new AgentLoop(provider, clock, config.agent),
      inject: [ModelProvider, Clock, APP_CONFIG],
    },
  ],
  exports: [
    ApprovalsModule,
    McpModule,
    BrowserModule,
    SkillsModule,
    AgentService,
    TurnRunner,
    TurnReaper,
    ConversationEvents,
    TurnPlanBuilders,
    TurnPreamble,
    ToolRegistry,
    AgentLoop,
    ModelSourceTester,
  ],
})
export class AgentModule {}
