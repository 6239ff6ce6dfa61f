import { Module } from '@nestjs/common';
import { AppData } from '#core/apps/app-data.js';
import { AppLifecycle } from '#core/apps/app-lifecycle.js';
import { AppsService } from '#core/apps/apps.service.js';
import { AppCleanup } from '#core/ports/app-cleanup.port.js';
import { SkillsModule } from './skills.module.js';

/**
 * Digital humans: records, lifecycle and settings. Exports AppsService (for chat, runs and
 * triggers to build on) and AppCleanup (deleting a space). Imports no SpacesModule — that one
 * imports this — and reads spaces through the global SpaceRepository port instead.
 */
@Module({
  imports: [SkillsModule],
  providers: [AppsService, AppData, AppLifecycle, { provide: AppCleanup, useExisting: AppsService }],
  exports: [AppsService, AppCleanup, AppLifecycle],
})
export class AppsModule {}
