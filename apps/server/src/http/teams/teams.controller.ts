import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import type { MessageDto } from '#contracts/conversations.js';
import type { SuccessBody } from '#contracts/errors.js';
import type {
  DeliveryReceipt,
  EpochBoardDto,
  TeamDetailDto,
  TeamDto,
  TeamEdgeDto,
  TeamEpochDto,
  TeamMemberDto,
  TeamArtifactDto,
  TeamTriggerDto,
} from '#contracts/teams.js';
import type { ProposedMember } from '#core/teams/team-rules.js';
import { TeamTriggers } from '#core/teams/team-triggers.js';
import { TeamsService } from '#core/teams/teams.service.js';
import { ok } from '../common/envelope.js';
import { toMessageDto } from '../conversations/conversations.presenter.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { MESSAGE } from '../openapi/response-schemas.js';
import { arr } from '../openapi/schema.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import {
  AddMemberDto,
  ChatMessagesQuery,
  CreateTeamDto,
  CreateTeamTriggerDto,
  OpenConversationDto,
  RenameConversationDto,
  ProposeMembersDto,
  PutEdgesDto,
  SendToMemberDto,
  TeamListQuery,
  UpdateMemberDto,
  UpdateTeamDto,
} from './teams.dto.js';
import {
  DELIVERY,
  EPOCH_BOARD,
  PROPOSED_MEMBER,
  TEAM,
  TEAM_DETAIL,
  TEAM_EDGE,
  TEAM_EPOCH,
  TEAM_MEMBER,
  TEAM_ARTIFACT,
  TEAM_TRIGGER,
} from './teams.schemas.js';
import { TeamEpochParams, TeamIdParams, TeamMemberParams, TeamTriggerParams } from '../common/path-params.js';

/** Teams of digital humans (docs/api/teams.md). A run's progress comes over WebSocket (`team:*`). */
@ApiTags('Teams')
@Controller('api/teams')
export class TeamsController {
  constructor(
    private readonly teams: TeamsService,
    private readonly triggers: TeamTriggers,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List teams',
    description: 'Every team, or with `?spaceId` those of that space, with its `status` and `currentEpochId`.',
  })
  @ApiData(arr(TEAM))
  async list(@Query() q: TeamListQuery): Promise<SuccessBody<TeamDto[]>> {
    return ok(await this.teams.list(q.spaceId));
  }

  @Post()
  @ApiOperation({
    summary: 'Create a team',
    description:
      'Body `{input: {name, goal, owningSpaceId, memberSourcing?, collabMode?, escalationRouting?, members?, leadAppId?}, confirmedProposal?}`. Without `leadAppId` a lead digital human is provisioned (deleted with the team); with `memberSourcing: "ai"` each `confirmedProposal` member is installed as its own digital human. 400 `Missing required field: <field>`; 404 unknown space or app; 409 a member name used twice. Emits `team:updated` (`changed: "created"`).',
  })
  @HttpCode(200)
  @ApiData(TEAM, 404, 409)
  async create(@Body() body: CreateTeamDto): Promise<SuccessBody<TeamDto>> {
    return ok(await this.teams.create(body.input, body.confirmedProposal));
  }

  @Post('propose-members')
  @ApiOperation({
    summary: 'Propose members for a new team',
    description:
      'Asks the current model for at most 5 members `[{memberName, role, responsibility}]` for the goal (a lead is added separately); nothing is stored. 400 a missing `goal`/`owningSpaceId`; 404 unknown space; 503 `No model is configured.` or `The model proposed no members; try again.`',
  })
  @HttpCode(200)
  @ApiData(arr(PROPOSED_MEMBER), 404, 503)
  async propose(@Body() body: ProposeMembersDto): Promise<SuccessBody<ProposedMember[]>> {
    return ok(await this.teams.proposeMembers(body.goal, body.owningSpaceId));
  }

  @Get(':teamId')
  @ApiOperation({
    summary: 'Read a team',
    description: 'The team record with its `status` and `currentEpochId`. 404 `Team not found`.',
  })
  @ApiData(TEAM)
  async get(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamDto>> {
    return ok(await this.teams.get(teamId));
  }

  @Get(':teamId/detail')
  @ApiOperation({
    summary: 'Read a team with its members and edges',
    description:
      '`{team, members, edges, tasks, findings, activities, pendingEscalations}`, the board being that of the current run, else the latest. 404 `Team not found`.',
  })
  @ApiData(TEAM_DETAIL)
  async detail(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamDetailDto>> {
    return ok(await this.teams.detail(teamId));
  }

  @Patch(':teamId')
  @ApiOperation({
    summary: 'Change a team',
    description:
      'Body `{name?, goal?, memberSourcing?, collabMode?, escalationRouting?, leadAppId?}`. 400 `leadAppId must name a member of this team` or naming a bad field; 404 `Team not found`. Emits `team:updated` (`changed: "team"`).',
  })
  @ApiData(TEAM)
  async update(@Param() { teamId }: TeamIdParams, @Body() body: UpdateTeamDto): Promise<SuccessBody<TeamDto>> {
    return ok(await this.teams.update(teamId, body as Record<string, unknown>));
  }

  @Delete(':teamId')
  @ApiOperation({
    summary: 'Dissolve a team',
    description:
      'Stops a running run, deletes the team and its records, and deletes its AI-provisioned members (other digital humans are kept). 404 `Team not found`. Emits `team:updated` with `removed: true`.',
  })
  @ApiDone()
  async dissolve(@Param() { teamId }: TeamIdParams): Promise<{ success: true }> {
    await this.teams.dissolve(teamId);
    return { success: true };
  }

  @Post(':teamId/members')
  @ApiOperation({
    summary: 'Add a member to a team',
    description:
      'Body `{appId, memberName?, role?, duty?}`: an installed digital human; the name defaults to its display name, the role to `member`. 400 `Missing required field: appId` or an uninstalled app; 404 `Team not found` or unknown app; 409 `A member named "<name>" is already in this team` or `The digital human is already a member of this team`. Emits `team:updated` (`changed: "members"`).',
  })
  @HttpCode(200)
  @ApiData(TEAM_MEMBER, 409)
  async addMember(@Param() { teamId }: TeamIdParams, @Body() body: AddMemberDto): Promise<SuccessBody<TeamMemberDto>> {
    return ok(await this.teams.addMember(teamId, body));
  }

  @Patch(':teamId/members/:appId')
  @ApiOperation({
    summary: 'Change a team member',
    description:
      'Body `{memberName?, role?, duty?}`. 404 `App is not a member of this team`; 409 `A member named "<name>" is already in this team`. Emits `team:updated` (`changed: "members"`).',
  })
  @ApiData(TEAM_MEMBER, 409)
  async updateMember(
    @Param() { teamId, appId }: TeamMemberParams,
    @Body() body: UpdateMemberDto,
  ): Promise<SuccessBody<TeamMemberDto>> {
    return ok(await this.teams.updateMember(teamId, appId, body as Record<string, unknown>));
  }

  @Delete(':teamId/members/:appId')
  @ApiOperation({
    summary: 'Remove a member from a team',
    description:
      'Its edges go with it. 404 `App is not a member of this team` or `Team not found`. Emits `team:updated` (`changed: "members"`).',
  })
  @ApiDone()
  async removeMember(@Param() { teamId, appId }: TeamMemberParams): Promise<{ success: true }> {
    await this.teams.removeMember(teamId, appId);
    return { success: true };
  }

  @Put(':teamId/edges')
  @ApiOperation({
    summary: "Replace a team's edges",
    description:
      'Body `{edges: [{fromAppId, toAppId}]}` replaces every edge and answers the new list; in `structured` mode members may message only along an edge (either direction). 400 `Missing required field: edges` or `An edge names an app that is not a member of this team`. Emits `team:updated` (`changed: "edges"`).',
  })
  @ApiData(arr(TEAM_EDGE))
  async putEdges(@Param() { teamId }: TeamIdParams, @Body() body: PutEdgesDto): Promise<SuccessBody<TeamEdgeDto[]>> {
    return ok(await this.teams.putEdges(teamId, body.edges));
  }

  @Post(':teamId/run')
  @ApiOperation({
    summary: 'Start a team run',
    description:
      'Opens a run epoch (at most one per team, across replicas) and puts the goal in the lead\'s mailbox; the run seals itself when the work is done or a limit is hit. 409 `A run is already running for this team`; 400 `The team has no lead`. Emits `team:updated` (`changed: "epoch-opened"`), then `team:*` progress events.',
  })
  @HttpCode(200)
  @ApiData(TEAM_EPOCH, 409)
  async run(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamEpochDto>> {
    return ok(await this.teams.run(teamId));
  }

  @Post(':teamId/pause')
  @ApiOperation({
    summary: 'Pause a team',
    description:
      'Seals the running run (`endReason: "stopped"`) and stops every member\'s turn in it; answers the sealed epoch. 409 `No run is running for this team`.',
  })
  @HttpCode(200)
  @ApiData(TEAM_EPOCH, 409)
  async pause(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamEpochDto>> {
    return ok(await this.teams.pause(teamId));
  }

  @Get(':teamId/epochs')
  @ApiOperation({
    summary: "List a team's runs and conversations",
    description: 'All epochs of the team (run and conversation), newest first. 404 `Team not found`.',
  })
  @ApiData(arr(TEAM_EPOCH))
  async epochs(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamEpochDto[]>> {
    return ok(await this.teams.epochs(teamId));
  }

  @Get(':teamId/conversations')
  @ApiOperation({
    summary: "List a team's conversations",
    description: 'Only the epochs with `lifecycle: "conversation"`, newest first. 404 `Team not found`.',
  })
  @ApiData(arr(TEAM_EPOCH))
  async conversations(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamEpochDto[]>> {
    return ok(await this.teams.listConversations(teamId));
  }

  @Post(':teamId/conversations')
  @ApiOperation({
    summary: 'Open a team conversation',
    description:
      'Body `{title?}`; opens a conversation epoch in which a person chats with members by sending with its `epochId`. It never seals itself (archive it with DELETE). 404 `Team not found`.',
  })
  @HttpCode(200)
  @ApiData(TEAM_EPOCH)
  async openConversation(
    @Param() { teamId }: TeamIdParams,
    @Body() body: OpenConversationDto,
  ): Promise<SuccessBody<TeamEpochDto>> {
    return ok(await this.teams.openConversation(teamId, body.title));
  }

  @Patch(':teamId/conversations/:epochId')
  @ApiOperation({
    summary: 'Rename a team conversation',
    description:
      'Body `{title}`; answers the renamed epoch. 404 `Epoch not found` (also for a run epoch); 400 a missing title.',
  })
  @ApiData(TEAM_EPOCH)
  async renameConversation(
    @Param() { teamId, epochId }: TeamEpochParams,
    @Body() body: RenameConversationDto,
  ): Promise<SuccessBody<TeamEpochDto>> {
    return ok(await this.teams.renameConversation(teamId, epochId, body.title));
  }

  @Delete(':teamId/conversations/:epochId')
  @ApiOperation({
    summary: 'Archive a team conversation',
    description:
      'Seals the conversation epoch (`completed`) and stops what still runs in it; its records are kept. Archiving it again changes nothing. 404 `Epoch not found`.',
  })
  @ApiDone()
  async archiveConversation(@Param() { teamId, epochId }: TeamEpochParams): Promise<{ success: true }> {
    await this.teams.archiveConversation(teamId, epochId);
    return { success: true };
  }

  @Get(':teamId/epochs/:epochId/board')
  @ApiOperation({
    summary: 'Read the board of a team run',
    description:
      "`{epoch, tasks, findings, members, activities}` of that epoch. 404 `Epoch not found` (also for another team's epoch).",
  })
  @ApiData(EPOCH_BOARD)
  async board(@Param() { teamId, epochId }: TeamEpochParams): Promise<SuccessBody<EpochBoardDto>> {
    return ok(await this.teams.board(teamId, epochId));
  }

  @Get(':teamId/epochs/:epochId/artifacts')
  @ApiOperation({
    summary: 'List the files the members produced in an epoch',
    description:
      'Tasks’ `resultRef`s, findings’ `ref`s and files the members’ turns wrote (`Write`/`Edit`), as recorded; ' +
      'each path once per kind: the tasks’, then the findings’, then the files.',
  })
  @ApiData(arr(TEAM_ARTIFACT))
  async artifacts(@Param() { teamId, epochId }: TeamEpochParams): Promise<SuccessBody<TeamArtifactDto[]>> {
    return ok(await this.teams.artifacts(teamId, epochId));
  }

  @Get(':teamId/chat-messages')
  @ApiOperation({
    summary: "Read a team member's chat messages",
    description:
      "`?appId` (required) and optional `?epochId` (default: the current run, else the latest); the member's transcript in that epoch, `[]` when none. 404 `App is not a member of this team`.",
  })
  @ApiData(arr(MESSAGE))
  async chatMessages(
    @Param() { teamId }: TeamIdParams,
    @Query() q: ChatMessagesQuery,
  ): Promise<SuccessBody<MessageDto[]>> {
    return ok((await this.teams.chatMessages(teamId, q.appId, q.epochId)).map(toMessageDto));
  }

  @Post(':teamId/members/:appId/send')
  @ApiOperation({
    summary: 'Send a message to a team member',
    description:
      "Body `{message, epochId?}`: a person's message to that member in the epoch (default: the current run, else the latest); answers `{epochId, delivery}`, `delivery` being `mid_turn`, `queued`, or `undelivered` once the epoch is sealed. 400 `No run has started for this team yet`; 404 `App is not a member of this team`.",
  })
  @HttpCode(200)
  @ApiData(DELIVERY)
  async send(
    @Param() { teamId, appId }: TeamMemberParams,
    @Body() body: SendToMemberDto,
  ): Promise<SuccessBody<{ epochId: string; delivery: DeliveryReceipt }>> {
    return ok(await this.teams.sendToMember(teamId, appId, body.message, body.epochId));
  }

  @Post(':teamId/members/:appId/stop')
  @ApiOperation({
    summary: 'Stop a team member',
    description:
      "Stops that member's running turn in the current (else latest) epoch. 404 `App is not a member of this team`.",
  })
  @HttpCode(200)
  @ApiDone()
  async stop(@Param() { teamId, appId }: TeamMemberParams): Promise<{ success: true }> {
    await this.teams.stopMember(teamId, appId);
    return { success: true };
  }

  @Get(':teamId/triggers')
  @ApiOperation({
    summary: 'List a team’s triggers (schedules and webhooks that open a run)',
    description:
      '`[{id, teamId, source: {type, config}, nextRunAt, createdAt}]`; a webhook\'s secret reads `"********"`. 404 `Team not found`.',
  })
  @ApiData(arr(TEAM_TRIGGER))
  async listTriggers(@Param() { teamId }: TeamIdParams): Promise<SuccessBody<TeamTriggerDto[]>> {
    return ok(await this.triggers.list(teamId));
  }

  @Post(':teamId/triggers')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add a trigger to a team: a schedule or a webhook whose firing opens a run epoch',
    description:
      '`source` as a digital human’s subscription: `{type: "schedule", config: {every | cron, timezone?, ' +
      'workday_calendar?}}` or `{type: "webhook", config: {path, secret?}}` (deliveries to `POST /hooks/<path>`). ' +
      'Each firing opens one run epoch across replicas (`triggerType` set); while a run is running it is skipped.',
  })
  @ApiData(TEAM_TRIGGER, 404, 409)
  async addTrigger(
    @Param() { teamId }: TeamIdParams,
    @Body() body: CreateTeamTriggerDto,
  ): Promise<SuccessBody<TeamTriggerDto>> {
    return ok(await this.triggers.create(teamId, body.source));
  }

  @Delete(':teamId/triggers/:triggerId')
  @ApiOperation({
    summary: 'Remove a team’s trigger',
    description: 'The trigger stops firing. 404 `Trigger not found` or `Team not found`.',
  })
  @ApiDone(404)
  async removeTrigger(@Param() { teamId, triggerId }: TeamTriggerParams): Promise<{ success: true }> {
    await this.triggers.remove(teamId, triggerId);
    return { success: true };
  }
}
