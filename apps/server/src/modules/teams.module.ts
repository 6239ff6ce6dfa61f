import { Module } from '@nestjs/common';
import { AppData } from '#core/apps/app-data.js';
import { TeamMemberPlanBuilder } from '#core/teams/team-member-plan-builder.js';
import { TeamTriggers } from '#core/teams/team-triggers.js';
import { TeamWork } from '#core/teams/team-work.js';
import { TeamsService } from '#core/teams/teams.service.js';
import { AgentModule } from './agent.module.js';
import { AppAgentModule } from './app-agent.module.js';
import { AppsModule } from './apps.module.js';
import { ConversationsModule } from './conversations.module.js';
import { ModelsModule } from './models.module.js';
import { SpacesModule } from './spaces.module.js';
import { TriggersModule } from './triggers.module.js';

/**
 * Teams of digital humans (docs/api/teams.md): records, runs, the mailbox and member turns.
 * Registers the `team-member` plan builder with the agent engine in every role, so any worker
 * runs a member's turn. The records' adapter (TeamRepository) is bound in InfraModule.
 */
@Module({
  imports: [AppsModule, AppAgentModule, AgentModule, SpacesModule, ConversationsModule, ModelsModule, TriggersModule],
  providers: [TeamsService, TeamWork, TeamTriggers, TeamMemberPlanBuilder, AppData],
  exports: [TeamsService, TeamWork, TeamTriggers],
})
export class TeamsModule {}
