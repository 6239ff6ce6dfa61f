import { Module } from '@nestjs/common';
import { AppData } from '#core/apps/app-data.js';
import { AppLifecycle } from '#core/apps/app-lifecycle.js';
import { AppsService } from '#core/apps/apps.service.js';
import { AppCleanup } from '#core/ports/app-cleanup.port.js';
import { FilesModule } from '../artifacts/files.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { AppsController } from './apps.controller.js';

/**
 * Digital humans: records, lifecycle and settings. Exports AppsService (for chat, runs and
 * triggers to build on) and AppCleanup (deleting a space). Imports no SpacesModule — that one
 * imports this — and reads spaces through the global SpaceRepository port instead.
 */
@Module({
  imports: [FilesModule, SkillsModule],
  controllers: [AppsController],
  providers: [AppsService, AppData, AppLifecycle, { provide: AppCleanup, useExisting: AppsService }],
  exports: [AppsService, AppCleanup, AppLifecycle],
})
export class AppsModule {}
