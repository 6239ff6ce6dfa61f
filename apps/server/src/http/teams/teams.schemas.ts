import type {
  BoardFindingDto,
  BoardTaskDto,
  EpochBoardDto,
  TeamActivityDto,
  TeamDetailDto,
  TeamDto,
  TeamEdgeDto,
  TeamEpochDto,
  TeamMemberDto,
  TeamPendingEscalationDto,
  TeamArtifactDto,
  TeamTriggerDto,
} from '#contracts/teams.js';
import { TASK_STATUSES } from '#contracts/teams.js';
import type { ProposedMember } from '#core/teams/team-rules.js';
import { anyObject, arr, bool, component, isoTime, nullable, obj, oneOfValues, shape, str } from '../openapi/schema.js';

/** The response schemas of the Teams operations (docs/api/teams.md). */

export const TEAM = component(
  'Team',
  shape<TeamDto>({
    id: str(),
    name: str(),
    owningSpaceId: str(),
    goal: str(),
    leadAppId: nullable(str()),
    memberSourcing: oneOfValues(['manual', 'ai']),
    collabMode: oneOfValues(['structured', 'free']),
    escalationRouting: oneOfValues(['user', 'lead']),
    status: oneOfValues(['idle', 'running', 'waiting_user', 'error']),
    currentEpochId: nullable(str()),
    createdAt: isoTime(),
    updatedAt: isoTime(),
  }),
);

export const TEAM_MEMBER = component(
  'TeamMember',
  shape<TeamMemberDto>({
    teamId: str(),
    appId: str(),
    memberName: str(),
    role: str(),
    duty: nullable(str()),
    isLead: bool(),
    aiProvisioned: bool(),
    addedAt: isoTime(),
  }),
);

export const TEAM_EDGE = component('TeamEdge', shape<TeamEdgeDto>({ fromAppId: str(), toAppId: str() }));

export const TEAM_EPOCH = component(
  'TeamEpoch',
  shape<TeamEpochDto>({
    id: str(),
    teamId: str(),
    lifecycle: oneOfValues(['run', 'conversation']),
    startedAt: isoTime(),
    endedAt: nullable(isoTime()),
    endReason: nullable(oneOfValues(['completed', 'stopped', 'timeout', 'error'])),
    outcome: nullable(oneOfValues(['output', 'no_action', 'escalation', 'failed'])),
    summary: nullable(str()),
    triggerType: nullable(oneOfValues(['manual', 'schedule', 'webhook', 'file', 'http'])),
    title: nullable(str()),
  }),
);

const TASK = component(
  'TeamTask',
  shape<BoardTaskDto>({
    id: str(),
    epochId: str(),
    title: str(),
    assigneeAppId: str(),
    status: oneOfValues(TASK_STATUSES),
    resultRef: nullable(str()),
    note: nullable(str()),
    parentId: nullable(str()),
    createdByAppId: nullable(str()),
    createdAt: isoTime(),
    updatedAt: isoTime(),
  }),
);

const FINDING = component(
  'TeamFinding',
  shape<BoardFindingDto>({
    id: str(),
    epochId: str(),
    authorAppId: str(),
    body: str(),
    ref: nullable(str()),
    createdAt: isoTime(),
  }),
);

const ACTIVITY = component(
  'TeamActivity',
  shape<TeamActivityDto>({
    id: str(),
    epochId: str(),
    kind: oneOfValues(['message', 'reply', 'task_post', 'task_update', 'finding', 'run_end']),
    actorAppId: nullable(str()),
    targetAppId: nullable(str()),
    subject: str(),
    body: nullable(str()),
    createdAt: isoTime(),
  }),
);

export const TEAM_DETAIL = shape<TeamDetailDto>({
  team: TEAM,
  members: arr(TEAM_MEMBER),
  edges: arr(TEAM_EDGE),
  tasks: arr(TASK),
  findings: arr(FINDING),
  activities: arr(ACTIVITY),
  pendingEscalations: arr(
    shape<TeamPendingEscalationDto>({
      appId: str(),
      memberName: str(),
      entryId: str(),
      epochId: str(),
      question: str(),
      choices: arr(str()),
    }),
  ),
});

export const EPOCH_BOARD = shape<EpochBoardDto>({
  epoch: TEAM_EPOCH,
  tasks: arr(TASK),
  findings: arr(FINDING),
  members: arr(TEAM_MEMBER),
  activities: arr(ACTIVITY),
});

export const DELIVERY = shape<{ epochId: string; delivery: string }>({
  epochId: str(),
  delivery: oneOfValues(['mid_turn', 'queued', 'undelivered']),
});

export const PROPOSED_MEMBER = component(
  'ProposedTeamMember',
  shape<ProposedMember>({ memberName: str(), role: str(), responsibility: str() }),
);

export const TEAM_TRIGGER = component(
  'TeamTrigger',
  shape<TeamTriggerDto>({
    id: str(),
    teamId: str(),
    source: obj(
      {
        type: oneOfValues(['schedule', 'webhook']),
        config: anyObject('schedule {every|cron, timezone?, workday_calendar?}; webhook {path, secret?} (secret masked)'),
      },
      ['type', 'config'],
    ),
    nextRunAt: nullable(isoTime('a schedule’s next occurrence')),
    createdAt: isoTime(),
  }),
);

export const TEAM_ARTIFACT = component(
  'TeamArtifact',
  shape<TeamArtifactDto>({
    kind: oneOfValues(['task_result', 'finding', 'file']),
    ref: str('a path in the team’s space (as the member wrote it)'),
    appId: str(),
    sourceId: nullable(str('the task, the finding, or the message of the turn that wrote the file')),
    title: str(),
    createdAt: isoTime(),
  }),
);
