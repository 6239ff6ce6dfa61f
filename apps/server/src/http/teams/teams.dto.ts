import { IsOptional, IsString } from 'class-validator';
import { Documented, QueryDto } from '../common/validation.js';

/**
 * Request bodies and queries of the Teams operations (docs/api/teams.md). Shapes are checked
 * here (400); what the fields may hold (members, modes, names) is checked by core.
 */

const MEMBER_INPUT: { type: 'object'; properties: Record<string, { type: 'string' }>; required: string[] } = {
  type: 'object',
  properties: {
    appId: { type: 'string' },
    memberName: { type: 'string' },
    role: { type: 'string' },
    duty: { type: 'string' },
  },
  required: ['appId'],
};

export class CreateTeamDto {
  @Documented(
    {
      type: 'object',
      properties: {
        name: { type: 'string' },
        goal: { type: 'string' },
        owningSpaceId: { type: 'string' },
        memberSourcing: { type: 'string', enum: ['manual', 'ai'] },
        collabMode: { type: 'string', enum: ['structured', 'free'] },
        escalationRouting: { type: 'string', enum: ['user', 'lead'] },
        members: { type: 'array', items: MEMBER_INPUT },
        leadAppId: { type: 'string' },
      },
      required: ['name', 'goal', 'owningSpaceId'],
    },
    { required: true },
  )
  input: Record<string, unknown>;

  /** With `memberSourcing: "ai"`: the members to provision, as `propose-members` answered them. */
  @Documented({
    type: 'array',
    items: {
      type: 'object',
      properties: { memberName: { type: 'string' }, role: { type: 'string' }, responsibility: { type: 'string' } },
      required: ['memberName', 'role', 'responsibility'],
    },
  })
  confirmedProposal?: unknown;
}

export class ProposeMembersDto {
  @Documented({ type: 'string' }, { required: true })
  goal: string;

  @Documented({ type: 'string' }, { required: true })
  owningSpaceId: string;
}

export class UpdateTeamDto {
  @Documented({ type: 'string' })
  name?: unknown;

  @Documented({ type: 'string' })
  goal?: unknown;

  @Documented({ type: 'string', enum: ['manual', 'ai'] })
  memberSourcing?: unknown;

  @Documented({ type: 'string', enum: ['structured', 'free'] })
  collabMode?: unknown;

  @Documented({ type: 'string', enum: ['user', 'lead'] })
  escalationRouting?: unknown;

  @Documented({ type: 'string' })
  leadAppId?: unknown;
}

export class AddMemberDto {
  @Documented({ type: 'string' }, { required: true })
  appId: string;

  @Documented({ type: 'string' })
  memberName?: unknown;

  @Documented({ type: 'string' })
  role?: unknown;

  @Documented({ type: 'string' })
  duty?: unknown;
}

export class UpdateMemberDto {
  @Documented({ type: 'string' })
  memberName?: unknown;

  @Documented({ type: 'string' })
  role?: unknown;

  @Documented({ type: 'string' })
  duty?: unknown;
}

export class PutEdgesDto {
  @Documented(
    {
      type: 'array',
      items: {
        type: 'object',
        properties: { fromAppId: { type: 'string' }, toAppId: { type: 'string' } },
        required: ['fromAppId', 'toAppId'],
      },
    },
    { required: true },
  )
  edges: unknown[];
}

export class SendToMemberDto {
  @Documented({ type: 'string' }, { required: true })
  message: string;

  @IsOptional()
  @IsString()
  epochId?: string;
}

@QueryDto()
export class TeamListQuery {
  @IsOptional()
  @IsString()
  spaceId?: string;
}

@QueryDto()
export class ChatMessagesQuery {
  @Documented({ type: 'string' }, { required: true })
  appId: string;

  @IsOptional()
  @IsString()
  epochId?: string;
}

export class OpenConversationDto {
  @Documented({ type: 'string' })
  title?: unknown;
}

export class RenameConversationDto {
  @Documented({ type: 'string' }, { required: true })
  title: unknown;
}

export class CreateTeamTriggerDto {
  @Documented(
    {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['schedule', 'webhook'] },
        config: { type: 'object' },
      },
      required: ['type', 'config'],
    },
    { required: true },
  )
  source: Record<string, unknown>;
}
