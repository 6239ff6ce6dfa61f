import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '#core/config/app-config.js';
import { InfraModule } from '#infra/infra.module.js';
import type { Infrastructure } from '#infra/infrastructure.js';
import type { AppLogger } from '#infra/logging/logger.js';
import { ApiModule } from './modules/api.module.js';
import { WorkerModule } from './modules/worker.module.js';

/**
 * Composes the process for its role (SVC_ROLE) from the role modules, each on CoreModule, all
 * on InfraModule: `api` serves HTTP and WebSocket, `worker` runs jobs, `all` both.
 */
@Module({})
export class AppModule {
  static forConfig(config: AppConfig, infra: Infrastructure, password: string, logger: AppLogger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfraModule.forRoot(infra, password, logger),
        ...(config.role !== 'worker' ? [ApiModule.forConfig(config)] : []),
        ...(config.role !== 'api' ? [WorkerModule] : []),
      ],
    };
  }
}
