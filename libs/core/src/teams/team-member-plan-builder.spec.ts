import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { TeamChannels, type TeamDto, type TeamMemberDto, teamMemberConversationId } from '#contracts/teams.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { planWorld } from '#testing/service-worlds.js';
import type { TurnPlan } from '../agent/engine/turn-plan.js';
import { TurnTexts } from '../agent/turn-endings.js';
import { isRefusal } from '../agent/turn-plan-builder.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';

Logger.overrideLogger(false);

const T = 'team-1';
const E = 'epoch-1';

describe('TeamMemberPlanBuilder', () => {
  let w: ReturnType<typeof planWorld>;
  let lead: TeamMemberDto;
  let ana: TeamMemberDto;
  let seq = 0;

  const member = (appId: string, memberName: string, isLead = false): TeamMemberDto => ({
    teamId: T,
    appId,
    memberName,
    role: isLead ? 'planner' : 'writer',
    duty: isLead ? null : 'Writes the copy',
    isLead,
    aiProvisioned: false,
    addedAt: '2026-03-01T10:00:00.000Z',
  });
  const conversationOf = (m: TeamMemberDto, epochId = E) => teamMemberConversationId(m.appId, T, epochId);
  /** A member's turn after a message of the person, or with `request` as given. */
  const turnOf = async (m: TeamMemberDto, request: Record<string, unknown> = {}): Promise<TurnRecord> => {
    const conversationId = conversationOf(m);
    const active = await w.turns.findActive(conversationId);
    if (active) await w.turns.finish(active.id, 'completed');
    await w.conversations.appendMessage(conversationId, { role: 'user', content: 'Please start' });
    return (await w.turns.createQueued({
      id: `t${++seq}`,
      kind: 'team-member',
      conversationId,
      spaceId: 's1',
      request: { teamId: T, epochId: E, appId: m.appId, depth: 0, ...request },
    }))!;
  };
  const planOf = async (turn: TurnRecord): Promise<TurnPlan> => {
    const built = await w.memberPlan.build(turn, w.io().plan.io);
    assert.ok(!isRefusal(built), JSON.stringify(built));
    return built;
  };
  const mail = (to: TeamMemberDto, body: string, depth: number) =>
    w.teams.enqueue({
      id: `m${++seq}`,
      epochId: E,
      toAppId: to.appId,
      fromAppId: lead.appId,
      body,
      depth,
      createdAt: '2026-03-01T10:00:00.000Z',
    });

  beforeEach(async () => {
    w = planWorld({ bash: true });
    await w.space('s1');
    await w.model();
    const spec = { ...WATCHER_SPEC, permissions: ['bash', 'svc-api-ref'] };
    const leadApp = await w.apps.install({ spec: { ...spec, name: 'Lead' }, spaceId: 's1' });
    const anaApp = await w.apps.install({ spec: { ...spec, name: 'Ana' }, spaceId: 's1' });
    lead = member(leadApp.id, 'Lead', true);
    ana = member(anaApp.id, 'Ana');
    const team: TeamDto = {
      id: T,
      name: 'Shop',
      owningSpaceId: 's1',
      goal: 'Sell tea',
      leadAppId: lead.appId,
      memberSourcing: 'manual',
      collabMode: 'structured',
      escalationRouting: 'user',
      status: 'idle',
      currentEpochId: null,
      createdAt: '',
      updatedAt: '',
    } as TeamDto;
    await w.teams.create(team, [lead, ana]);
    await w.teams.replaceEdges(T, [{ fromAppId: lead.appId, toAppId: ana.appId }]);
    await w.teams.openRunEpoch({
      id: E,
      teamId: T,
      lifecycle: 'run',
      startedAt: '2026-03-01T10:00:00.000Z',
      endedAt: null,
      endReason: null,
      outcome: null,
      summary: null,
      triggerType: 'manual',
      title: null,
    });
    for (const m of [lead, ana]) await w.conversations.openWithId('s1', conversationOf(m), { appId: m.appId });
    w.skills.installed.push('tidy');
  });

  it("gives a member its app's prompt with the team's briefing, no shell or service API, and the member tools", async () => {
    const plan = await planOf(await turnOf(ana));
    const names = plan.tools.names();
    assert.deepEqual(names.slice(0, 8), [
      'Read',
      'Write',
      'Edit',
      'Glob',
      'Grep',
      'TodoWrite',
      'AskUserQuestion',
      'Skill',
    ]);
    assert.ok(names.includes('team_send') && names.includes('team_read_board'), names.join());
    assert.equal(names.includes('team_complete'), false, 'only the lead completes the work');
    for (const never of ['Bash', 'ServiceApi']) assert.equal(names.includes(never), false, never);
    assert.match(plan.system, /^You are "Ana", a digital human/);
    assert.match(plan.system, /You are "Ana" \(writer\) in the team "Shop"\./);
    assert.match(plan.system, /Your duty: Writes the copy/);
    assert.match(plan.system, /You may message: Lead\./, 'an edge goes both ways');
    assert.match(plan.system, /When you finish a task, mark it done/);
    assert.equal(plan.model.effort, 'off');

    const leadPlan = await planOf(await turnOf(lead));
    assert.ok(leadPlan.tools.names().includes('team_complete'));
    assert.match(leadPlan.system, /You are "Lead" \(planner, the lead\)/);
    assert.match(leadPlan.system, /You may message: Ana\./);
    assert.match(leadPlan.system, /As the lead: break the goal into tasks/);
  });

  it('hands mail that arrives while the turn works to its next step, after the input that waited', async () => {
    const turn = await turnOf(ana);
    const recording = w.io();
    const built = await w.memberPlan.build(turn, recording.plan.io);
    assert.ok(!isRefusal(built));
    assert.deepEqual(await built.io.takePendingInput(), []);
    recording.pendingInput.push('a word from the person');
    await mail(ana, 'Draft the label', 3);
    const taken = await built.io.takePendingInput();
    assert.equal(taken.length, 2);
    assert.equal(taken[0], 'a word from the person');
    assert.match(taken[1]!, /Draft the label/);
    assert.deepEqual(await built.io.takePendingInput(), [], 'each mail is taken once');
  });

  it('refuses a turn that names no member, one of an ended run, and one whose member or app is gone', async () => {
    const io = w.io().plan.io;
    const refused = async (turn: TurnRecord) => {
      const built = await w.memberPlan.build(turn, io);
      assert.ok(isRefusal(built));
      return [built.error, built.details.errorCode];
    };
    assert.deepEqual(await refused({ ...(await turnOf(ana)), conversationId: conversationOf(lead) }), [
      'This turn names no team member.',
      'NOT_FOUND',
    ]);
    await w.appRepo.delete(ana.appId);
    assert.deepEqual(await refused(await turnOf(ana)), [
      'The digital human of this member no longer exists.',
      'NOT_FOUND',
    ]);
    await w.teams.removeMember(T, ana.appId);
    assert.deepEqual(await refused(await turnOf(ana)), ['The team or this member no longer exists.', 'NOT_FOUND']);
    await w.teams.seal(E, { endReason: 'stopped', outcome: 'no_action', summary: null } as never);
    assert.deepEqual(await refused(await turnOf(lead)), ['The run has ended.', 'NOT_FOUND']);
  });

  it('ends a turn quietly when an earlier turn took its mail and nothing else waits', async () => {
    const turn = await turnOf(ana);
    await w.conversations.appendMessage(turn.conversationId, { role: 'assistant', content: 'Done already' });
    const built = await w.memberPlan.build(turn, w.io().plan.io);
    assert.ok(isRefusal(built));
    assert.equal(built.error, "Nothing waits in this member's mailbox.");
    assert.ok(built.quiet?.afterEnded, 'what waits after it still goes on');
    await mail(ana, 'One more thing', 1);
    assert.ok(!isRefusal(await w.memberPlan.build(turn, w.io().plan.io)), 'mail waiting opens the turn');
  });

  it("keeps the reply in the member's transcript and announces it", async () => {
    const turn = await turnOf(ana);
    const plan = await planOf(turn);
    await plan.hooks.onComplete({
      reply: 'Label drafted',
      thoughts: [],
      tokenUsage: {} as never,
      model: 'm1',
      contextTokens: 0,
    } as never);
    const last = (await w.conversations.get('s1', turn.conversationId)).messages.at(-1);
    assert.deepEqual([last?.role, last?.content, last?.meta.turnId], ['assistant', 'Label drafted', turn.id]);
    assert.deepEqual(w.bus.on(TeamChannels.memberHistory).at(-1), { teamId: T, appId: ana.appId, epochId: E });
  });

  it("after a turn lost with its replica, mail that waits for a member starts that member's next turn", async () => {
    const turn = await turnOf(ana);
    await w.turns.finish(turn.id, 'interrupted', TurnTexts.replicaLost);
    await mail(lead, 'Ana is back?', 1);
    await w.memberPlan.endedWithoutPlan(turn, { status: 'interrupted', error: TurnTexts.replicaLost });
    const next = await w.turns.findActive(conversationOf(lead));
    assert.equal(next?.kind, 'team-member');
    assert.equal(next?.request.appId, lead.appId);
  });
});
