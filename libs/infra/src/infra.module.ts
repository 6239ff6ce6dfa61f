import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AccessPassword } from '#core/auth/access.service.js';
import { Clock, SystemClock } from '#core/ports/clock.port.js';
import { ConnectionRegistry } from '#core/ports/connection-registry.port.js';
import { EventBus } from '#core/ports/event-bus.port.js';
import { JobQueue } from '#core/ports/job-queue.port.js';
import { LockoutStore } from '#core/ports/lockout-store.port.js';
import { ReadinessProbe } from '#core/ports/readiness.port.js';
import { SettingsRepository } from '#core/ports/settings.repository.port.js';
import { APP_CONFIG } from '#core/config/app-config.js';
import type { Infrastructure } from './infrastructure.js';
import { AppLogger } from './logging/logger.js';

/** Binds every port to the adapter the started Infrastructure chose. */
@Global()
@Module({})
export class InfraModule {
  static forRoot(infra: Infrastructure, password: string, logger: AppLogger): DynamicModule {
    const providers = [
      { provide: APP_CONFIG, useValue: infra.config },
      { provide: AppLogger, useValue: logger },
      { provide: AccessPassword, useValue: new AccessPassword(password) },
      { provide: Clock, useClass: SystemClock },
      { provide: EventBus, useValue: infra.eventBus },
      { provide: JobQueue, useValue: infra.jobQueue },
      { provide: LockoutStore, useValue: infra.lockoutStore },
      { provide: ConnectionRegistry, useValue: infra.connectionRegistry },
      { provide: SettingsRepository, useValue: infra.settings },
      { provide: ReadinessProbe, useValue: infra.readiness },
    ];
    return { module: InfraModule, providers, exports: providers.map((p) => p.provide) };
  }
}
