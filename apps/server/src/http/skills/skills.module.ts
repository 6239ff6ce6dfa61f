import { Module } from '@nestjs/common';
import { SkillsService } from '#core/skills/skills.service.js';
import { FilesModule } from '../artifacts/files.module.js';

/** Installed skills on disk: written and removed with their apps (AppsModule), offered to turns (AgentModule). */
@Module({
  imports: [FilesModule],
  providers: [SkillsService],
  exports: [SkillsService],
})
export class SkillsModule {}
