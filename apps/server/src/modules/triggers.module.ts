import { Module } from '@nestjs/common';
import { FileOwners } from '#core/triggers/file-owners.js';
import { FileTriggersService } from '#core/triggers/file-triggers.service.js';
import { WebhookOwners } from '#core/triggers/webhook-owners.js';
import { TriggersService } from '#core/triggers/triggers.service.js';
import { AppAgentModule } from './app-agent.module.js';
import { AppsModule } from './apps.module.js';
import { ArtifactEventsModule } from './artifact-events.module.js';

/**
 * Triggers (docs/api/triggers.md): webhook ingress, file triggers and what fires schedules. The scheduler
 * itself (the AppScheduler port's adapter, `TriggerScheduler`) is bound in InfraModule.
 */
@Module({
  imports: [AppsModule, AppAgentModule, ArtifactEventsModule],
  providers: [TriggersService, FileTriggersService, WebhookOwners, FileOwners],
  exports: [TriggersService, WebhookOwners, FileOwners],
})
export class TriggersModule {}
