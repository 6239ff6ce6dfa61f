import { type DynamicModule, Module, type Type } from '@nestjs/common';
import type { AppConfig } from '#core/config/app-config.js';
import { AgentController } from '../http/agent/agent.controller.js';
import { AppChatController } from '../http/apps/app-chat.controller.js';
import { AppRunsController } from '../http/apps/app-runs.controller.js';
import { AppsController } from '../http/apps/apps.controller.js';
import { ArtifactSearchController } from '../http/artifact-events/artifact-search.controller.js';
import { ArtifactsController } from '../http/artifacts/artifacts.controller.js';
import { SpaceArtifactsController } from '../http/artifacts/space-artifacts.controller.js';
import { SpaceTrashController } from '../http/artifacts/space-trash.controller.js';
import { RemoteController } from '../http/auth/remote.controller.js';
import { ConversationsController } from '../http/conversations/conversations.controller.js';
import { HooksController } from '../http/hooks/hooks.controller.js';
import {
  AppImChatController,
  ChannelHooksController,
  ChannelsController,
  ImSessionsController,
} from '../http/channels/channels.controller.js';
import { MetricsController } from '../http/metrics/metrics.controller.js';
import { AiSourcesController } from '../http/models/ai-sources.controller.js';
import { ConfigController } from '../http/models/config.controller.js';
import { SpacesController } from '../http/spaces/spaces.controller.js';
import { TeamsController } from '../http/teams/teams.controller.js';
import { KnowledgeController } from '../http/knowledge/knowledge.controller.js';
import { AppExportController, SkillNamesController, StoreController } from '../http/store/store.controller.js';
import { BackupController } from '../http/system/backup.controller.js';
import { HealthController } from '../http/system/health.controller.js';
import { SystemController } from '../http/system/system.controller.js';
import { TerminalController } from '../http/terminal/terminal.controller.js';
import { TestHooksController } from '../http/testing/test-hooks.controller.js';
import { EventsGateway } from '../ws/events.gateway.js';
import { BrowserViewGateway } from '../ws/browser-view.gateway.js';
import { AppBrowserLoginController, BrowserController } from '../http/browser/browser.controller.js';
import { CoreModule } from './core.module.js';

/** Outside the contexts: sign-in, the system's version and settings, backups. */
const SYSTEM_CONTROLLERS: Type[] = [RemoteController, SystemController, BackupController];

/** The contexts' controllers, in the order their routes and OpenAPI operations have always come. */
const CONTEXT_CONTROLLERS: Type[] = [
  SpacesController,
  AppsController,
  ConversationsController,
  ConfigController,
  AiSourcesController,
  ArtifactSearchController,
  ArtifactsController,
  SpaceArtifactsController,
  SpaceTrashController,
  AgentController,
  AppChatController,
  AppRunsController,
  StoreController,
  SkillNamesController,
  AppExportController,
  ChannelHooksController,
  HooksController,
  TeamsController,
  KnowledgeController,
  ChannelsController,
  ImSessionsController,
  AppImChatController,
  BrowserController,
  AppBrowserLoginController,
  TerminalController,
];

/** The HTTP API's controllers (the OpenAPI document and the assistant's operations come from them). */
export const API_CONTROLLERS: Type[] = [...SYSTEM_CONTROLLERS, ...CONTEXT_CONTROLLERS];

/**
 * The `api` role's entry points on top of the core: the HTTP controllers, probes and metrics
 * included, the WebSocket gateway and the webhook ingress (HooksController).
 */
@Module({})
export class ApiModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [CoreModule],
      controllers: [
        HealthController,
        MetricsController,
        ...SYSTEM_CONTROLLERS,
        ...(config.testHooks ? [TestHooksController] : []),
        ...CONTEXT_CONTROLLERS,
      ],
      providers: [EventsGateway, BrowserViewGateway],
    };
  }
}
