import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { appRunConversationId } from '#contracts/apps.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { planWorld } from '#testing/service-worlds.js';
import type { TurnPlan } from '../../agent/engine/turn-plan.js';
import { TurnTexts } from '../../agent/turn-endings.js';
import { isRefusal } from '../../agent/turn-plan-builder.js';
import type { App } from '../../kernel/app.js';
import { McpTexts } from '../../mcp/mcp-rules.js';
import type { TurnRecord } from '../../ports/turn.repository.port.js';
import { MAX_REPORT_NUDGES } from './app-run-plan-builder.js';
import { RunTexts } from './app-runs.service.js';
import { REPORT_TO_USER } from './report-to-user.tool.js';

Logger.overrideLogger(false);

const BROWSER = 'mcp__ai-browser__browser_navigate';

describe('AppRunPlanBuilder', () => {
  let w: ReturnType<typeof planWorld>;
  let app: App;

  const activity = (type: string) => w.appRepo.activity.filter((e) => e.appId === app.id && e.type === type);
  /** Starts a run of `app` and gives its queued turn. */
  const startRun = async (): Promise<TurnRecord> => {
    const started = await w.runs.startRun(app.id, { type: 'manual' });
    assert.equal(started.outcome, 'started');
    return (await w.turns.findActive(appRunConversationId(app.id)))!;
  };
  const planOf = async (turn: TurnRecord): Promise<TurnPlan> => {
    const built = await w.appRunPlan.build(turn, w.io().plan.io);
    assert.ok(!isRefusal(built), JSON.stringify(built));
    return built;
  };
  const complete = (plan: TurnPlan) =>
    plan.hooks.onComplete({
      reply: 'Working',
      thoughts: [],
      tokenUsage: {} as never,
      model: 'm1',
      contextTokens: 0,
    } as never);
  const report = (plan: TurnPlan, input: Record<string, unknown>) =>
    plan.tools.get(REPORT_TO_USER)!.run(input, {} as never);

  beforeEach(async () => {
    w = planWorld({ bash: true });
    await w.space('s1');
    await w.model();
    app = await w.apps.install({ spec: WATCHER_SPEC, spaceId: 's1' });
  });

  it("gives a run the app's built-ins without questions, report_to_user, the browser, knowledge and skills", async () => {
    w.knowledge.bound.add(`app:${app.id}`);
    w.skills.installed.push('tidy');
    const plan = await planOf(await startRun());
    assert.deepEqual(plan.tools.names(), [
      'Read',
      'Write',
      'Edit',
      'Glob',
      'Grep',
      'TodoWrite',
      REPORT_TO_USER,
      BROWSER,
      'kb_search',
      'Skill',
    ]);
    assert.match(plan.system, /You are running on your own: nobody reads your replies while you work\./);
    assert.match(plan.system, new RegExp(`End every run by calling ${REPORT_TO_USER}`));
    assert.equal(plan.model.effort, 'off');
    assert.equal(plan.history.length, 1, "the run's trigger message");
    assert.deepEqual(w.knowledge.scopes.at(-1), { spaceId: 's1', appId: app.id });
  });

  it('gives Bash and ServiceApi only to an app whose permissions ask for them', async () => {
    app = await w.apps.install({
      spec: { ...WATCHER_SPEC, name: 'Shell', permissions: ['bash', 'svc-api-ref'] },
      spaceId: 's1',
    });
    const names = (await planOf(await startRun())).tools.names();
    assert.deepEqual(names, [
      'Read',
      'Write',
      'Edit',
      'Glob',
      'Grep',
      'TodoWrite',
      'Bash',
      REPORT_TO_USER,
      'ServiceApi',
    ]);
  });

  it('refuses a run whose app is gone, or whose required MCP server is not installed', async () => {
    const turn = await startRun();
    await w.appRepo.delete(app.id);
    assert.deepEqual(await w.appRunPlan.build(turn, w.io().plan.io), {
      refused: true,
      error: 'The digital human of this run no longer exists.',
      details: { errorCode: 'NOT_FOUND' },
    });
    const needy = await w.apps.install({
      spec: { ...WATCHER_SPEC, name: 'Needy', requires: { mcps: [{ id: 'github' }] } },
      spaceId: 's1',
    });
    const needyTurn = (await w.turns.createQueued({
      id: 'needy-run',
      kind: 'app-run',
      conversationId: appRunConversationId(needy.id),
      spaceId: 's1',
      request: { appId: needy.id, runId: 'r1', nudges: 0, triggerType: 'manual' },
    }))!;
    assert.deepEqual(await w.appRunPlan.build(needyTurn, w.io().plan.io), {
      refused: true,
      error: McpTexts.notInstalled('github'),
      details: { errorCode: 'MCP_UNAVAILABLE' },
    });
  });

  it('finishes the run on its final report', async () => {
    const turn = await startRun();
    const plan = await planOf(turn);
    await report(plan, { type: 'complete', summary: 'All quiet' });
    assert.match(String((await report(plan, { type: 'complete', summary: 'Again' })).output), /already reported/);
    await complete(plan);
    await plan.hooks.afterCompleted?.();
    assert.deepEqual(
      activity('run_complete').map((e) => e.content),
      [{ summary: 'All quiet' }],
    );
    assert.deepEqual(activity('run_error'), []);
    assert.equal((await w.turns.findActive(turn.conversationId))?.id, turn.id, 'no reminder was queued');
  });

  it(`reminds a run that ended its turn without a report, ${MAX_REPORT_NUDGES} times, then fails it`, async () => {
    let turn = await startRun();
    for (let nudges = 0; nudges <= MAX_REPORT_NUDGES; nudges++) {
      assert.equal(turn.request.nudges, nudges);
      const plan = await planOf(turn);
      await complete(plan);
      await w.turns.finish(turn.id, 'completed');
      await plan.hooks.afterCompleted?.();
      const next = await w.turns.findActive(turn.conversationId);
      if (nudges < MAX_REPORT_NUDGES) {
        assert.ok(next, `reminder ${nudges + 1} is a new turn of the run`);
        assert.equal(next.request.runId, turn.request.runId);
        turn = next;
      } else assert.equal(next, null);
    }
    assert.deepEqual(
      activity('run_error').map((e) => (e.content as { error?: string }).error),
      [RunTexts.noReport],
    );
  });

  it('a run ended without a plan fails, closes its pages and lets the next delivery start', async () => {
    const turn = await startRun();
    await w.appRunPlan.endedWithoutPlan(turn, { status: 'failed', error: TurnTexts.noModel });
    assert.deepEqual(
      activity('run_error').map((e) => (e.content as { error?: string }).error),
      [TurnTexts.noModel],
    );
    assert.deepEqual(w.aiBrowser.calls, [`release run:${turn.request.runId}`]);
    assert.deepEqual(w.scheduler.ended, [app.id]);
  });
});
