import { type DynamicModule, Module } from '@nestjs/common';
import { AccessService } from '#core/auth/access.service.js';
import type { AppConfig } from '#core/config/app-config.js';
import { SystemService } from '#core/system/system.service.js';
import { InfraModule } from '#infra/infra.module.js';
import type { Infrastructure } from '#infra/infrastructure.js';
import type { AppLogger } from '#infra/logging/logger.js';
import { AgentModule } from './http/agent/agent.module.js';
import { AppAgentModule } from './http/apps/app-agent.module.js';
import { AppsModule } from './http/apps/apps.module.js';
import { ArtifactEventsModule } from './http/artifact-events/artifact-events.module.js';
import { ArtifactsModule } from './http/artifacts/artifacts.module.js';
import { RemoteController } from './http/auth/remote.controller.js';
import { ConversationsModule } from './http/conversations/conversations.module.js';
import { ModelsModule } from './http/models/models.module.js';
import { SpacesModule } from './http/spaces/spaces.module.js';
import { StoreModule } from './http/store/store.module.js';
import { MetricsController } from './http/metrics/metrics.controller.js';
import { BackupController } from './http/system/backup.controller.js';
import { HealthController } from './http/system/health.controller.js';
import { TestHooksController } from './http/testing/test-hooks.controller.js';
import { SystemController } from './http/system/system.controller.js';
import { TriggersModule } from './http/hooks/triggers.module.js';
import { JobProcessors } from './jobs/job-processors.js';
import { EventsGateway } from './ws/events.gateway.js';

/** Composes the server for a role: `api` serves HTTP and WebSocket, `worker` runs jobs, `all` both. */
@Module({})
export class AppModule {
  static forConfig(config: AppConfig, infra: Infrastructure, password: string, logger: AppLogger): DynamicModule {
    const serves = config.role !== 'worker';
    const testHooks = serves && config.testHooks ? [TestHooksController] : [];
    return {
      module: AppModule,
      imports: [
        InfraModule.forRoot(infra, password, logger),
        // Context modules. The file watcher runs in every role that serves or works.
        SpacesModule,
        ConversationsModule,
        ModelsModule,
        ArtifactEventsModule,
        ArtifactsModule,
        AgentModule,
        AppsModule,
        AppAgentModule,
        StoreModule,
        TriggersModule,
      ],
      controllers: [
        HealthController,
        MetricsController,
        ...(serves ? [RemoteController, SystemController, BackupController] : []),
        ...testHooks,
      ],
      providers: [SystemService, AccessService, JobProcessors, ...(serves ? [EventsGateway] : [])],
    };
  }
}
