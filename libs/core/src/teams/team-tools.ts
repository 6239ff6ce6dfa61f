import { randomUUID } from 'node:crypto';
import {
  type BoardTaskDto,
  TASK_STATUSES,
  type TaskStatus,
  TeamChannels,
  type TeamDto,
  type TeamEdgeDto,
  type TeamEpochDto,
  type TeamMemberDto,
} from '#contracts/teams.js';
import { parseReport } from '../apps/agent/report-to-user.tool.js';
import { type AgentTool, requireString, ToolInputError, type ToolOutcome } from '../kernel/tool.js';
import type { Clock } from '../ports/clock.port.js';
import type { EventBus } from '../ports/event-bus.port.js';
import type { TeamRepository } from '../ports/team.repository.port.js';
import { findMember, mayMessage, subjectOf, TeamTexts } from './team-rules.js';
import type { TeamWork } from './team-work.js';

/** What a member's tools act for: its team, epoch and self, and the depth of the chain its turn is in. */
export interface MemberToolContext {
  team: TeamDto;
  epochId: string;
  me: TeamMemberDto;
  members: TeamMemberDto[];
  edges: TeamEdgeDto[];
  /** The deepest message this turn has read so far. */
  depth: () => number;
  work: TeamWork;
  teams: TeamRepository;
  bus: EventBus;
  clock: Clock;
}

const ok = (output: unknown): ToolOutcome => ({
  output: typeof output === 'string' ? output : JSON.stringify(output),
  isError: false,
});

function optionalString(input: Record<string, unknown>, field: string): string | null {
  const value = input[field];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new ToolInputError(`${field} must be a string`);
  return value;
}

function teammate(ctx: MemberToolContext, nameOrId: string): TeamMemberDto {
  const found = findMember(ctx.members, nameOrId);
  if (!found) {
    const names = ctx.members.map((m) => m.memberName).join(', ');
    throw new ToolInputError(`No member named "${nameOrId}" in this team. Members: ${names}`);
  }
  return found;
}

/** The epoch as it is now: a sealed one takes nothing more. */
async function openEpoch(ctx: MemberToolContext): Promise<TeamEpochDto> {
  const epoch = await ctx.teams.findEpoch(ctx.epochId);
  if (!epoch || epoch.endedAt) throw new ToolInputError(TeamTexts.runEnded);
  return epoch;
}

/** The member tools of a team turn (docs/api/teams.md, "Member tools"); `team_complete` only for the lead. */
export function teamTools(ctx: MemberToolContext): AgentTool[] {
  const tools: AgentTool[] = [
    {
      name: 'team_send',
      description:
        'Send a message to a teammate (by member name). This is the only way anything reaches a teammate: ' +
        'what you write in your reply is not delivered. Answers the delivery receipt.',
      inputSchema: {
        type: 'object',
        properties: {
          to: { type: 'string', description: "The teammate's member name." },
          message: { type: 'string' },
        },
        required: ['to', 'message'],
      },
      async run(input) {
        const to = teammate(ctx, requireString(input, 'to'));
        const message = requireString(input, 'message');
        if (to.appId === ctx.me.appId) throw new ToolInputError('You cannot send a message to yourself.');
        if (!mayMessage(ctx.team.collabMode, ctx.edges, ctx.me.appId, to.appId)) {
          throw new ToolInputError(
            `This team is structured: you may message only the members you are connected to, not ${to.memberName}.`,
          );
        }
        const epoch = await openEpoch(ctx);
        const sent = await ctx.work.send(ctx.team, epoch, ctx.me, to, message, ctx.depth() + 1);
        if ('breach' in sent) return { output: `Not sent: ${sent.breach} The run has ended.`, isError: true };
        return ok({ delivery: sent.delivery, to: to.memberName });
      },
    },
    {
      name: 'team_post_task',
      description:
        'Post a task on the team board for a member (by member name). Posting does not notify them: tell them with team_send.',
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          assignee: { type: 'string', description: "The assignee's member name." },
          parentId: { type: 'string', description: 'A task this one is part of.' },
        },
        required: ['title', 'assignee'],
      },
      async run(input) {
        const title = requireString(input, 'title');
        const assignee = teammate(ctx, requireString(input, 'assignee'));
        const parentId = optionalString(input, 'parentId');
        const epoch = await openEpoch(ctx);
        if (parentId && !(await ctx.teams.tasks(epoch.id)).some((t) => t.id === parentId)) {
          throw new ToolInputError(`No task ${parentId} on this board.`);
        }
        const now = new Date(ctx.clock.now()).toISOString();
        const task: BoardTaskDto = {
          id: randomUUID(),
          epochId: epoch.id,
          title,
          assigneeAppId: assignee.appId,
          status: 'pending',
          resultRef: null,
          note: null,
          parentId,
          createdByAppId: ctx.me.appId,
          createdAt: now,
          updatedAt: now,
        };
        await ctx.teams.addTask(task);
        await ctx.bus.publish(TeamChannels.blackboard, { teamId: ctx.team.id, epochId: epoch.id, kind: 'task', task });
        await ctx.work.record(ctx.team.id, epoch.id, 'task_post', ctx.me.appId, assignee.appId, title);
        return ok({ taskId: task.id, assignee: assignee.memberName, status: task.status });
      },
    },
    {
      name: 'team_update_task',
      description:
        'Update a task on the board: its status, and optionally where its result is (a file path) and a note.',
      inputSchema: {
        type: 'object',
        properties: {
          taskId: { type: 'string' },
          status: { type: 'string', enum: [...TASK_STATUSES] },
          resultRef: { type: 'string', description: 'Where the result is (a file path), not the result itself.' },
          note: { type: 'string' },
        },
        required: ['taskId', 'status'],
      },
      async run(input) {
        const taskId = requireString(input, 'taskId');
        const status = requireString(input, 'status');
        if (!(TASK_STATUSES as readonly string[]).includes(status)) {
          throw new ToolInputError(`status must be one of ${TASK_STATUSES.join(', ')}`);
        }
        const epoch = await openEpoch(ctx);
        const task = await ctx.teams.updateTask(epoch.id, taskId, {
          status: status as TaskStatus,
          ...(optionalString(input, 'resultRef') !== null ? { resultRef: optionalString(input, 'resultRef') } : {}),
          ...(optionalString(input, 'note') !== null ? { note: optionalString(input, 'note') } : {}),
        });
        if (!task) throw new ToolInputError(`No task ${taskId} on this board.`);
        await ctx.bus.publish(TeamChannels.blackboard, { teamId: ctx.team.id, epochId: epoch.id, kind: 'task', task });
        await ctx.work.record(
          ctx.team.id,
          epoch.id,
          'task_update',
          ctx.me.appId,
          task.assigneeAppId,
          `${task.title}: ${status}`,
          task.note,
        );
        return ok({ taskId: task.id, status: task.status });
      },
    },
    {
      name: 'team_post_finding',
      description: 'Post a finding on the team board for everyone to read (append-only).',
      inputSchema: {
        type: 'object',
        properties: {
          content: { type: 'string' },
          ref: { type: 'string', description: 'Where more is (a file path).' },
        },
        required: ['content'],
      },
      async run(input) {
        const content = requireString(input, 'content');
        const epoch = await openEpoch(ctx);
        const finding = {
          id: randomUUID(),
          epochId: epoch.id,
          authorAppId: ctx.me.appId,
          body: content,
          ref: optionalString(input, 'ref'),
          createdAt: new Date(ctx.clock.now()).toISOString(),
        };
        await ctx.teams.addFinding(finding);
        await ctx.bus.publish(TeamChannels.blackboard, {
          teamId: ctx.team.id,
          epochId: epoch.id,
          kind: 'finding',
          finding,
        });
        await ctx.work.record(ctx.team.id, epoch.id, 'finding', ctx.me.appId, null, subjectOf(content), content);
        return ok({ findingId: finding.id });
      },
    },
    {
      name: 'team_read_board',
      description: 'Read the team board: tasks (yours only with mine, or by status), findings and the latest activity.',
      inputSchema: {
        type: 'object',
        properties: {
          mine: { type: 'boolean' },
          status: { type: 'string', enum: [...TASK_STATUSES] },
        },
      },
      async run(input) {
        const [tasks, findings, activities] = await Promise.all([
          ctx.teams.tasks(ctx.epochId),
          ctx.teams.findings(ctx.epochId),
          ctx.teams.activities(ctx.epochId),
        ]);
        const nameOf = (appId: string | null) =>
          appId === null ? 'user' : (ctx.members.find((m) => m.appId === appId)?.memberName ?? 'former member');
        const shown = tasks.filter(
          (t) =>
            (input.mine !== true || t.assigneeAppId === ctx.me.appId) && (!input.status || t.status === input.status),
        );
        const lines = ['## Tasks', '| id | title | assignee | status | result |', '|---|---|---|---|---|'];
        for (const t of shown) {
          lines.push(`| ${t.id} | ${t.title} | ${nameOf(t.assigneeAppId)} | ${t.status} | ${t.resultRef ?? ''} |`);
        }
        lines.push('', '## Findings');
        for (const f of findings) lines.push(`- ${nameOf(f.authorAppId)}: ${f.body}${f.ref ? ` (${f.ref})` : ''}`);
        lines.push('', '## Latest activity');
        for (const a of activities.slice(-20)) {
          lines.push(
            `- ${a.kind} ${nameOf(a.actorAppId)}${a.targetAppId ? ` → ${nameOf(a.targetAppId)}` : ''}: ${a.subject}`,
          );
        }
        return ok(lines.join('\n'));
      },
    },
  ];
  tools.push({
    name: 'report_to_user',
    description:
      'Ask your user a question you cannot settle with your team (type "escalation", the question as summary, optional choices). ' +
      'End your turn after it; the answer comes back to you in this conversation. Report progress on the board, not here.',
    inputSchema: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['escalation'] },
        summary: { type: 'string', description: 'The question.' },
        choices: { type: 'array', items: { type: 'string' } },
      },
      required: ['type', 'summary'],
    },
    async run(input) {
      const report = parseReport(input);
      if (report.type !== 'escalation')
        throw new ToolInputError(
          'In a team, report on the board (team_post_finding, team_update_task); report_to_user asks a question.',
        );
      const epoch = await openEpoch(ctx);
      const team = (await ctx.teams.findById(ctx.team.id)) ?? ctx.team;
      return ok(await ctx.work.escalate(team, epoch, ctx.me, report));
    },
  });
  if (ctx.me.isLead) {
    tools.push({
      name: 'team_complete',
      description: 'End the run (lead only) with a summary of what the team produced.',
      inputSchema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
      async run(input) {
        const summary = requireString(input, 'summary');
        const epoch = await openEpoch(ctx);
        await ctx.work.complete(ctx.team, epoch, ctx.me, summary);
        return ok('The run is complete. End your turn.');
      },
    });
  }
  return tools;
}
