import { Module } from '@nestjs/common';
import { SkillsService } from '#core/skills/skills.service.js';

/** Installed skills on disk: written and removed with their apps (AppsModule), offered to turns (AgentModule). */
@Module({
  providers: [SkillsService],
  exports: [SkillsService],
})
export class SkillsModule {}
