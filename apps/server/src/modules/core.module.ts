import { Module } from '@nestjs/common';
import { AccessService } from '#core/auth/access.service.js';
import { SystemService } from '#core/system/system.service.js';
import { AgentModule } from './agent.module.js';
import { AppAgentModule } from './app-agent.module.js';
import { AppsModule } from './apps.module.js';
import { ApprovalsModule } from './approvals.module.js';
import { BrowserViewsModule } from './browser-views.module.js';
import { ArtifactEventsModule } from './artifact-events.module.js';
import { ArtifactsModule } from './artifacts.module.js';
import { ConversationsModule } from './conversations.module.js';
import { KnowledgeModule } from './knowledge.module.js';
import { ModelsModule } from './models.module.js';
import { SpacesModule } from './spaces.module.js';
import { StoreModule } from './store.module.js';
import { TeamsModule } from './teams.module.js';
import { ChannelsModule } from './channels.module.js';
import { TriggersModule } from './triggers.module.js';

const CONTEXTS = [
  SpacesModule,
  ConversationsModule,
  ModelsModule,
  ApprovalsModule,
  ArtifactEventsModule,
  ArtifactsModule,
  AgentModule,
  AppsModule,
  AppAgentModule,
  StoreModule,
  TriggersModule,
  TeamsModule,
  KnowledgeModule,
  ChannelsModule,
  BrowserViewsModule,
];

/**
 * Every context's core services, in every role: the role modules (ApiModule, WorkerModule) add
 * their entry points on top. What runs in every role lives here: the file watcher, the plan
 * builders every turn kind registers, the start-up sweeps and seeds. A new context adds its
 * module here.
 */
@Module({
  imports: CONTEXTS,
  providers: [SystemService, AccessService],
  exports: [...CONTEXTS, SystemService, AccessService],
})
export class CoreModule {}
