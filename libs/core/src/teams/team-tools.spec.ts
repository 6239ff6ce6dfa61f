import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { TeamDto, TeamEpochDto, TeamMemberDto } from '#contracts/teams.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeTeamRepository } from '#testing/fake-teams.js';
import { FakeClock } from '#testing/fakes.js';
import type { AgentTool, ToolContext } from '../kernel/tool.js';
import { teamTools } from './team-tools.js';
import type { TeamWork } from './team-work.js';

const T = 'team-1';
const E = 'epoch-1';
const member = (appId: string, memberName: string, isLead = false): TeamMemberDto => ({
  teamId: T,
  appId,
  memberName,
  role: 'member',
  duty: null,
  isLead,
  aiProvisioned: false,
  addedAt: '2025-01-01T00:00:00.000Z',
});

describe('member tools', () => {
  let teams: FakeTeamRepository;
  let bus: RecordingEventBus;
  let sent: Array<{ to: string; body: string; depth: number }>;
  let completed: string[];
  const lead = member('lead', 'Lead', true);
  const ana = member('ana', 'Ana');
  const bo = member('bo', 'Bo');
  const team: TeamDto = {
    id: T,
    name: 'Shop',
    owningSpaceId: 's',
    goal: 'g',
    leadAppId: 'lead',
    memberSourcing: 'manual',
    collabMode: 'structured',
    escalationRouting: 'user',
    status: 'running',
    currentEpochId: E,
    createdAt: '',
    updatedAt: '',
  };
  const work = {
    send: async (
      _t: TeamDto,
      _e: TeamEpochDto,
      _from: TeamMemberDto,
      to: TeamMemberDto,
      body: string,
      depth: number,
    ) => {
      sent.push({ to: to.memberName, body, depth });
      return { delivery: 'queued', messageId: 'm' };
    },
    record: async () => undefined,
    complete: async (_t: TeamDto, _e: TeamEpochDto, _lead: TeamMemberDto, summary: string) => {
      completed.push(summary);
      return true;
    },
  } as unknown as TeamWork;
  const ctx = {} as ToolContext;

  const toolsOf = (me: TeamMemberDto): Record<string, AgentTool> =>
    Object.fromEntries(
      teamTools({
        team,
        epochId: E,
        me,
        members: [lead, ana, bo],
        edges: [{ fromAppId: 'lead', toAppId: 'ana' }],
        depth: () => 2,
        work,
        teams,
        bus,
        clock: new FakeClock(),
      }).map((t) => [t.name, t]),
    );

  beforeEach(async () => {
    teams = new FakeTeamRepository();
    bus = new RecordingEventBus();
    sent = [];
    completed = [];
    await teams.create(team, [lead, ana, bo]);
    await teams.openRunEpoch({
      id: E,
      teamId: T,
      lifecycle: 'run',
      startedAt: '2025-01-01T00:00:00.000Z',
      endedAt: null,
      endReason: null,
      outcome: null,
      summary: null,
      triggerType: 'manual',
      title: null,
    });
  });

  it('team_send goes along an edge in either direction, one hop deeper; else the model reads why not', async () => {
    const ana_ = toolsOf(ana);
    assert.deepEqual(await ana_.team_send!.run({ to: 'lead', message: 'done' }, ctx), {
      output: JSON.stringify({ delivery: 'queued', to: 'Lead' }),
      isError: false,
    });
    assert.deepEqual(sent, [{ to: 'Lead', body: 'done', depth: 3 }]);
    await assert.rejects(ana_.team_send!.run({ to: 'Bo', message: 'hi' }, ctx), /structured: you may message only/);
    await assert.rejects(ana_.team_send!.run({ to: 'Cy', message: 'hi' }, ctx), /No member named "Cy".*Lead, Ana, Bo/);
    await assert.rejects(ana_.team_send!.run({ to: 'ana', message: 'hi' }, ctx), /yourself/);
    await assert.rejects(ana_.team_send!.run({ to: 'Lead' }, ctx), /message is required/);
  });

  it('posts and updates tasks on the board, announcing each; unknown tasks and statuses are refused', async () => {
    const posted = JSON.parse(
      (await toolsOf(lead).team_post_task!.run({ title: 'Count', assignee: 'ana' }, ctx)).output,
    );
    assert.deepEqual([posted.assignee, posted.status], ['Ana', 'pending']);
    assert.deepEqual(
      (await teams.tasks(E)).map((t) => [t.title, t.assigneeAppId, t.createdByAppId]),
      [['Count', 'ana', 'lead']],
    );
    const update = toolsOf(ana).team_update_task!;
    await update.run({ taskId: posted.taskId, status: 'done', resultRef: 'count.md' }, ctx);
    assert.deepEqual(
      (await teams.tasks(E)).map((t) => [t.status, t.resultRef]),
      [['done', 'count.md']],
    );
    await assert.rejects(update.run({ taskId: posted.taskId, status: 'finished' }, ctx), /status must be one of/);
    await assert.rejects(update.run({ taskId: 'nope', status: 'done' }, ctx), /No task nope/);
    assert.deepEqual(
      bus.on('team:blackboard').map((e) => [e.kind, (e.task as { status: string }).status]),
      [
        ['task', 'pending'],
        ['task', 'done'],
      ],
    );
  });

  it('team_complete is the lead’s alone; a sealed epoch takes no more writes', async () => {
    assert.equal(toolsOf(ana).team_complete, undefined);
    await toolsOf(lead).team_complete!.run({ summary: 'All done.' }, ctx);
    assert.deepEqual(completed, ['All done.']);
    await teams.seal(E, { endReason: 'completed', outcome: 'output', summary: 'x', teamStatus: 'idle' });
    await assert.rejects(toolsOf(ana).team_post_finding!.run({ content: 'late' }, ctx), /The run has ended/);
    await assert.rejects(toolsOf(lead).team_send!.run({ to: 'Ana', message: 'late' }, ctx), /The run has ended/);
  });

  it('team_read_board shows the tasks (mine or by status), findings and activity as markdown', async () => {
    await toolsOf(lead).team_post_task!.run({ title: 'Count', assignee: 'Ana' }, ctx);
    await toolsOf(lead).team_post_task!.run({ title: 'Write', assignee: 'Bo' }, ctx);
    await toolsOf(ana).team_post_finding!.run({ content: 'Stock is low.', ref: 'stock.md' }, ctx);
    const mine = (await toolsOf(ana).team_read_board!.run({ mine: true }, ctx)).output;
    assert.match(mine, /\| Count \| Ana \| pending \|/);
    assert.doesNotMatch(mine, /Write/);
    assert.match(mine, /- Ana: Stock is low\. \(stock\.md\)/);
  });
});
