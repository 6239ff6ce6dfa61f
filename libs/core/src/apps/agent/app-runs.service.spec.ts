import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AppChannels, appRunConversationId } from '#contracts/apps.js';
import { ErrorCodes } from '#contracts/errors.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { appsWorld, refusal } from '#testing/service-worlds.js';
import type { App } from '../../kernel/app.js';
import { escalationExpiryJobId } from '../../kernel/job-ids.js';
import { McpTexts } from '../../mcp/mcp-rules.js';
import type { PendingApproval } from '../../ports/turn.repository.port.js';
import { AppErrors } from '../apps.service.js';
import { RunTexts } from './app-runs.service.js';

Logger.overrideLogger(false);

const SPEC = WATCHER_SPEC;
const UNKNOWN_APP = '00000000-0000-4000-8000-000000000000';
const NOW = Date.parse('2026-03-01T10:00:00Z');

type World = ReturnType<typeof appsWorld>;

describe('AppRunsService', () => {
  let w: World;
  let app: App;
  const install = (spec: Record<string, unknown> = SPEC, spaceId: string | null = 's1') =>
    w.apps.install({ spec, spaceId });
  const runConversation = () => appRunConversationId(app.id);
  const stored = async (id = app.id) => (await w.appRepo.findById(id))!;
  const activity = (type?: string) =>
    w.appRepo.activity.filter((e) => e.appId === app.id && (!type || e.type === type));
  const runMessages = async () => (await w.conversationRepo.findWithMessages(runConversation()))?.messages ?? [];
  const activeRun = () => w.turns.findActive(runConversation());
  /** Ends the app's active run turn, as its plan would. */
  const endRun = async () => w.turns.finish((await activeRun())!.id, 'completed');
  const lastState = () =>
    w.bus.on(AppChannels.statusChanged).at(-1)?.state as { status: string; runningCount: number; lastStatus: string };

  beforeEach(async () => {
    w = appsWorld();
    await w.space('s1');
    app = await install();
  });

  describe('startRun', () => {
    it('queues an app-run turn in the run conversation with the trigger message, counts it and marks the app running', async () => {
      const result = await w.runs.startRun(app.id, { type: 'manual', data: { price: 3 } });
      assert.equal(result.outcome, 'started');
      assert.ok(result.runId);
      assert.equal(result.conversationId, runConversation());

      const conversation = await w.conversations.findById(runConversation());
      assert.equal(conversation?.spaceId, 's1');
      assert.equal(conversation?.title, 'Watcher runs');
      assert.equal(conversation?.appId, app.id);
      const [message] = await runMessages();
      assert.equal(
        message?.content,
        'Run started by a manual trigger at 2026-03-01T10:00:00.000Z.\nTrigger data: {"price":3}\nDo your task now, then call report_to_user.',
      );
      assert.deepEqual(message?.meta, { runId: result.runId, trigger: 'manual' });

      const turn = await activeRun();
      assert.equal(turn?.kind, 'app-run');
      assert.deepEqual(turn?.request, {
        appId: app.id,
        runId: result.runId,
        nudges: 0,
        triggerType: 'manual',
        trigger: { type: 'manual', data: { price: 3 } },
        messageId: message?.id,
      });
      assert.deepEqual(
        w.queue.named('agent.turn').map((j) => j.data),
        [{ turnId: turn!.id, kind: 'app-run' }],
      );
      assert.deepEqual(w.metrics.of('runStarted'), [['manual']]);
      const { automation } = await stored();
      assert.equal(automation.runningCount, 1);
      assert.equal(automation.lastRunAtMs, NOW);
      assert.equal(lastState().status, 'running');
    });

    it('leaves out the trigger data line when the trigger has none, and uses the run id it is given', async () => {
      const result = await w.runs.startRun(app.id, { type: 'schedule' }, { runId: 'occurrence-1' });
      assert.equal(result.runId, 'occurrence-1');
      assert.equal(
        (await runMessages())[0]?.content,
        'Run started by a schedule trigger at 2026-03-01T10:00:00.000Z.\nDo your task now, then call report_to_user.',
      );
    });

    it('records run_skipped while a run is in progress, and starts nothing', async () => {
      await w.runs.startRun(app.id, { type: 'manual' });
      const second = await w.runs.startRun(app.id, { type: 'manual' });
      assert.deepEqual(second, { outcome: 'skipped', runId: null, reason: RunTexts.alreadyRunning });
      const [skipped] = activity('run_skipped');
      assert.deepEqual(skipped?.content, { reason: RunTexts.alreadyRunning });
      assert.equal(skipped?.runId, null);
      assert.equal((await stored()).automation.lastStatus, 'skipped');
      assert.equal((await runMessages()).length, 1, 'no trigger message for a skipped run');
      assert.equal(w.queue.named('agent.turn').length, 1);
      assert.deepEqual(
        w.bus.on(AppChannels.activityEntryNew).map((e) => (e.entry as { type: string }).type),
        ['run_skipped'],
      );
    });

    it('starts a run once the turn of a run that recorded its end is over, not "already running"', async () => {
      const first = await w.runs.startRun(app.id, { type: 'manual' });
      assert.equal(first.outcome, 'started');
      // The run's end is written just before its turn is recorded as ended.
      await w.runs.finishRun(app.id, first.runId!, { type: 'complete', summary: 'done' });
      assert.equal((await stored()).automation.runningCount, 0);
      setTimeout(() => void endRun(), 60);
      const next = await w.runs.startRun(app.id, { type: 'manual' });
      assert.equal(next.outcome, 'started');
      assert.notEqual(next.runId, first.runId);
      assert.equal(activity('run_skipped').length, 0);
    });

    it('records run_skipped for an app that is not active', async () => {
      await w.apps.pause(app.id);
      assert.deepEqual(await w.runs.startRun(app.id, { type: 'manual' }), {
        outcome: 'skipped',
        runId: null,
        reason: RunTexts.notRunning,
      });
      assert.equal(await w.conversations.findById(runConversation()), null);
    });

    it('records run_skipped naming a required MCP server that is missing', async () => {
      const needy = await install({ ...SPEC, name: 'Needy', requires: { mcps: [{ id: 'github' }] } });
      const result = await w.runs.startRun(needy.id, { type: 'manual' });
      assert.deepEqual(result, { outcome: 'skipped', runId: null, reason: McpTexts.notInstalled('github') });
      assert.equal(await w.turns.findActive(appRunConversationId(needy.id)), null);
    });

    it('refuses an unknown or uninstalled app', async () => {
      await assert.rejects(
        w.runs.startRun(UNKNOWN_APP, { type: 'manual' }),
        refusal('not_found', AppErrors.notFound(UNKNOWN_APP), ErrorCodes.APP_NOT_FOUND),
      );
      await w.apps.uninstall(app.id, false);
      await assert.rejects(
        w.runs.startRun(app.id, { type: 'manual' }),
        refusal('conflict', AppErrors.uninstalled, ErrorCodes.APP_UNINSTALLED),
      );
    });

    it('runs a global app in the temporary space', async () => {
      await w.spaceRepo.insert({
        id: TEMP_SPACE_ID,
        name: 'Temporary',
        path: '/data/temp',
        icon: 'folder',
        color: null,
        isTemp: true,
        preferences: {},
      });
      const global = await install({ ...SPEC, name: 'Global' }, null);
      await w.runs.startRun(global.id, { type: 'manual' });
      assert.equal((await w.turns.findActive(appRunConversationId(global.id)))?.spaceId, TEMP_SPACE_ID);
    });
  });

  describe('startQueuedRun and skipRun', () => {
    it('starts when free; waits, recording nothing, while busy or not active; skips for a blocked server', async () => {
      assert.equal(await w.runs.startQueuedRun(app.id, { type: 'webhook' }, 'd1'), 'started');
      assert.equal(await w.runs.startQueuedRun(app.id, { type: 'webhook' }, 'd2'), 'waiting');
      await endRun();
      await w.apps.pause(app.id);
      assert.equal(await w.runs.startQueuedRun(app.id, { type: 'webhook' }, 'd3'), 'waiting');
      assert.deepEqual(activity('run_skipped'), []);
      assert.deepEqual(
        (await runMessages()).map((m) => m.meta.runId),
        ['d1'],
      );
      const needy = await install({ ...SPEC, name: 'Needy', requires: { mcps: [{ id: 'github' }] } });
      assert.equal(await w.runs.startQueuedRun(needy.id, { type: 'webhook' }, 'd4'), 'skipped');
      // A run in progress is waited for before the servers are looked at.
      await w.turns.createQueued({
        id: 'needy-run',
        kind: 'app-run',
        conversationId: appRunConversationId(needy.id),
        spaceId: 's1',
        request: { appId: needy.id, runId: 'd5' },
      });
      assert.equal(await w.runs.startQueuedRun(needy.id, { type: 'webhook' }, 'd6'), 'waiting');
    });

    it('skipRun records the reason with its details', async () => {
      const result = await w.runs.skipRun(app.id, 'backing off', { failures: 3 });
      assert.deepEqual(result, { outcome: 'skipped', runId: null, reason: 'backing off' });
      assert.deepEqual(activity('run_skipped')[0]?.content, { failures: 3, reason: 'backing off' });
      assert.equal(lastState().lastStatus, 'skipped');
    });
  });

  describe('session, inject and continueRun', () => {
    it("answers a run's own messages and whether it is the active one; an unknown run is not found", async () => {
      const first = await w.runs.startRun(app.id, { type: 'manual' });
      await endRun();
      const second = await w.runs.startRun(app.id, { type: 'manual' });
      const session = await w.runs.session(app.id, first.runId!);
      assert.equal(session.active, false);
      assert.deepEqual(
        session.messages.map((m) => m.meta.runId),
        [first.runId],
      );
      assert.equal((await w.runs.session(app.id, second.runId!)).active, true);
      await assert.rejects(
        w.runs.session(app.id, 'nope'),
        refusal('not_found', RunTexts.runNotFound('nope'), ErrorCodes.RUN_NOT_FOUND),
      );
    });

    it('hands text to the running run at its next step, without a new turn', async () => {
      const { runId } = await w.runs.startRun(app.id, { type: 'manual' });
      assert.deepEqual(await w.runs.inject(app.id, runId!, 'Check the blue one too'), { runId });
      const turns = await w.turns.listActive();
      assert.equal(turns.length, 1);
      assert.deepEqual(
        turns[0]!.pendingInputs.map((i) => i.content),
        ['Check the blue one too'],
      );
      assert.deepEqual(w.metrics.of('runStarted'), [['manual']], 'not counted as a new start');
    });

    it('continues an ended run with a new turn of the same run', async () => {
      const { runId } = await w.runs.startRun(app.id, { type: 'manual' });
      await endRun();
      await w.runs.failRun(app.id, runId!, 'boom');
      w.clock.advance(60_000);
      assert.deepEqual(await w.runs.continueRun(app.id, runId!), { runId });
      const turn = await activeRun();
      const continued = (await runMessages()).at(-1);
      assert.equal(continued?.content, 'Continue.');
      assert.equal(continued?.meta.runId, runId);
      assert.deepEqual(turn?.request, {
        appId: app.id,
        runId,
        nudges: 0,
        triggerType: 'continue',
        messageId: continued?.id,
      });
      assert.deepEqual(w.metrics.of('runStarted'), [['manual'], ['continue']]);
      const { automation } = await stored();
      assert.equal(automation.runningCount, 1);
      assert.equal(automation.lastRunAtMs, NOW + 60_000);
    });

    it('refuses to resume an unknown run, while another run is active, or an ended run of an app not active', async () => {
      await assert.rejects(
        w.runs.inject(app.id, 'nope', 'x'),
        refusal('not_found', RunTexts.runNotFound('nope'), ErrorCodes.RUN_NOT_FOUND),
      );
      const first = await w.runs.startRun(app.id, { type: 'manual' });
      await endRun();
      await w.runs.startRun(app.id, { type: 'manual' });
      await assert.rejects(
        w.runs.inject(app.id, first.runId!, 'x'),
        refusal('conflict', RunTexts.otherRunActive, ErrorCodes.RUN_STATE_CONFLICT),
      );
      await endRun();
      await w.apps.pause(app.id);
      await assert.rejects(
        w.runs.continueRun(app.id, first.runId!),
        refusal('conflict', RunTexts.notRunning, ErrorCodes.RUN_STATE_CONFLICT),
      );
      assert.equal(await activeRun(), null);
    });
  });

  describe('recordReport', () => {
    it('records nothing for complete (finishRun does), a milestone, and an output it also pushes to channels', async () => {
      assert.equal(
        await w.runs.recordReport(app.id, 'r1', { type: 'complete', summary: 'Done' }),
        'Reported. The run is complete; end your turn.',
      );
      assert.deepEqual(activity(), []);
      assert.equal(
        await w.runs.recordReport(app.id, 'r1', { type: 'milestone', summary: 'Half way', data: { n: 1 } }),
        'Progress reported.',
      );
      assert.equal(
        await w.runs.recordReport(app.id, 'r1', { type: 'output', summary: 'Price is 3' }),
        'Output reported. The run is complete.',
      );
      assert.deepEqual(
        activity().map((e) => [e.type, e.runId, e.content]),
        [
          ['milestone', 'r1', { summary: 'Half way', data: { n: 1 } }],
          ['output', 'r1', { summary: 'Price is 3' }],
        ],
      );
      assert.deepEqual(w.listener.results, [{ appId: app.id, runId: 'r1', type: 'output', summary: 'Price is 3' }]);
      assert.equal(w.bus.on(AppChannels.activityEntryNew).length, 2);
    });

    it('opens an escalation: the entry, the app waiting on its user, the event and the channels', async () => {
      const reply = await w.runs.recordReport(app.id, 'r1', {
        type: 'escalation',
        summary: 'Buy now?',
        choices: ['yes', 'no'],
      });
      assert.equal(reply, 'Your question was sent to the user. End your turn now; their answer starts a new run.');
      const [entry] = activity('escalation');
      assert.deepEqual(entry?.content, { summary: 'Buy now?', question: 'Buy now?', choices: ['yes', 'no'] });
      const after = await stored();
      assert.equal(after.status, 'waiting_user');
      assert.equal(after.automation.pendingEscalationId, entry?.id);
      assert.deepEqual(w.bus.on(AppChannels.escalationNew), [
        { appId: app.id, entryId: entry?.id, question: 'Buy now?', choices: ['yes', 'no'] },
      ]);
      assert.deepEqual(w.listener.escalations, [
        { appId: app.id, entryId: entry!.id, question: 'Buy now?', choices: ['yes', 'no'] },
      ]);
      assert.deepEqual(w.queue.named('app.escalation-expire'), [], 'no timeout, no expiry');
      assert.deepEqual(await w.runs.openEscalation(app.id), {
        entryId: entry!.id,
        question: 'Buy now?',
        choices: ['yes', 'no'],
      });
    });

    it("gives a question a deadline and an expiry job after the spec's timeout, and names a team member's team", async () => {
      const timed = await install({ ...SPEC, name: 'Timed', escalation: { timeout_hours: 2 } });
      await w.runs.recordReport(timed.id, 'r1', { type: 'escalation', summary: 'Q' }, { teamId: 't1', epochId: 'e1' });
      const entry = w.appRepo.activity.find((e) => e.appId === timed.id)!;
      assert.deepEqual(entry.content, {
        summary: 'Q',
        teamId: 't1',
        epochId: 'e1',
        question: 'Q',
        choices: [],
        deadlineAt: NOW + 7_200_000,
      });
      assert.deepEqual(w.queue.named('app.escalation-expire'), [
        {
          id: escalationExpiryJobId(entry.id),
          data: { appId: timed.id, entryId: entry.id, runId: 'r1' },
          options: { jobId: escalationExpiryJobId(entry.id), delayMs: 7_200_000 },
        },
      ]);
      assert.deepEqual(w.bus.on(AppChannels.escalationNew)[0], {
        appId: timed.id,
        entryId: entry.id,
        question: 'Q',
        choices: [],
        teamId: 't1',
        epochId: 'e1',
      });
    });

    it('does not fail a report or a finished run when the channels cannot be told', async () => {
      w.listener.failing = new Error('platform down');
      assert.equal(
        await w.runs.recordReport(app.id, 'r1', { type: 'output', summary: 'x' }),
        'Output reported. The run is complete.',
      );
      await w.runs.recordReport(app.id, 'r1', { type: 'escalation', summary: 'Q' });
      assert.equal((await stored()).status, 'waiting_user');
      await w.runs.finishRun(app.id, 'r1', { type: 'complete', summary: 'Done' });
      assert.equal((await stored()).automation.lastStatus, 'ok', 'nor a finished run');
    });
  });

  describe('respond', () => {
    const ask = async () => {
      const { runId } = await w.runs.startRun(app.id, { type: 'manual' });
      await w.runs.recordReport(app.id, runId!, { type: 'escalation', summary: 'Buy now?', choices: ['yes', 'no'] });
      await endRun();
      return activity('escalation')[0]!.id;
    };

    it('refuses an empty answer and a question that is not open', async () => {
      const entryId = await ask();
      await assert.rejects(
        w.runs.respond(app.id, entryId, { choice: ' ', text: null }),
        refusal('invalid', 'choice or text is required'),
      );
      await assert.rejects(
        w.runs.respond(app.id, 'other', { choice: 'yes' }),
        refusal('not_found', RunTexts.escalationNotFound('other'), ErrorCodes.ESCALATION_NOT_FOUND),
      );
      assert.equal((await stored()).status, 'waiting_user');
    });

    it('records the answer in the entry, makes the app active again and starts a follow-up run with it', async () => {
      const entryId = await ask();
      w.clock.advance(1000);
      const result = await w.runs.respond(app.id, entryId, { choice: 'yes', text: 'under 3 only' });
      assert.equal(result.outcome, 'started');
      assert.deepEqual(result.response, { choice: 'yes', text: 'under 3 only' });

      const entry = w.appRepo.activity.find((e) => e.id === entryId)!;
      assert.deepEqual(entry.content.userResponse, { ts: NOW + 1000, choice: 'yes', text: 'under 3 only' });
      assert.deepEqual(entry.content.resolution, { reason: 'answered', ts: NOW + 1000 });
      const after = await stored();
      assert.equal(after.status, 'active');
      assert.equal(after.automation.pendingEscalationId, null);
      assert.deepEqual(w.bus.on(AppChannels.escalationResolved), [
        { appId: app.id, entryId, response: { choice: 'yes', text: 'under 3 only' } },
      ]);
      const announced = w.bus
        .on(AppChannels.activityEntryNew)
        .map((e) => e.entry as { id: string; content: Record<string, unknown> })
        .filter((e) => e.id === entryId);
      assert.equal(announced.length, 2, 'the updated entry is announced again');
      assert.deepEqual(announced[1]?.content.resolution, { reason: 'answered', ts: NOW + 1000 });
      const followUp = await activeRun();
      assert.equal(followUp?.request.runId, result.runId);
      assert.deepEqual(followUp?.request.trigger, {
        type: 'escalation_response',
        data: { entryId, question: 'Buy now?', choice: 'yes', text: 'under 3 only' },
      });
      assert.equal(
        (await runMessages()).at(-1)?.content,
        'Your user answered your question "Buy now?": yes: under 3 only\nCarry on with the task using this answer, then call report_to_user.',
      );
      await assert.rejects(
        w.runs.respond(app.id, entryId, { choice: 'yes' }),
        refusal('not_found', RunTexts.escalationNotFound(entryId)),
        'a question is answered once',
      );
    });

    it('lets the work that asked (a team member) resume instead of a new run', async () => {
      const entryId = await ask();
      const routed: unknown[] = [];
      w.answers.register(async (answered) => {
        routed.push(answered);
        return { runId: 'team-run', conversationId: 'team-conversation' };
      });
      const result = await w.runs.respond(app.id, entryId, { text: 'later' });
      assert.deepEqual(result, {
        outcome: 'started',
        runId: 'team-run',
        conversationId: 'team-conversation',
        response: { text: 'later' },
      });
      assert.equal(routed.length, 1);
      assert.equal(await activeRun(), null, 'no run of its own');
    });

    it('is how a channel answers the open question: false for one that is not open', async () => {
      const entryId = await ask();
      assert.deepEqual(await w.channels.openEscalation(app.id), {
        entryId,
        question: 'Buy now?',
        choices: ['yes', 'no'],
      });
      assert.equal(await w.channels.answerEscalation(app.id, 'other', { choice: 'no' }), false);
      assert.equal(await w.channels.answerEscalation(app.id, entryId, { choice: 'no' }), true);
      assert.equal(await w.runs.openEscalation(app.id), null);
    });
  });

  describe('expireEscalation', () => {
    it('closes an unanswered question once: expired entry, run_error, app active with the error', async () => {
      await w.runs.recordReport(app.id, 'r1', { type: 'escalation', summary: 'Q' });
      const entryId = activity('escalation')[0]!.id;
      await w.runs.expireEscalation(app.id, 'other', 'r1');
      assert.equal((await stored()).status, 'waiting_user', 'another question leaves it waiting');

      const statuses = w.bus.on(AppChannels.statusChanged).length;
      await w.runs.expireEscalation(app.id, entryId, 'r1');
      await w.runs.expireEscalation(app.id, entryId, 'r1');
      assert.deepEqual(w.appRepo.activity.find((e) => e.id === entryId)?.content.resolution, {
        reason: 'expired',
        ts: NOW,
      });
      const errors = activity('run_error');
      assert.equal(errors.length, 1);
      assert.deepEqual(errors[0]?.content, { error: RunTexts.escalationExpired, entryId });
      assert.equal(errors[0]?.runId, 'r1');
      const after = await stored();
      assert.equal(after.status, 'active');
      assert.equal(after.automation.pendingEscalationId, null);
      assert.equal(after.automation.lastStatus, 'error');
      assert.equal(after.automation.lastError, RunTexts.escalationExpired);
      assert.equal(w.bus.on(AppChannels.statusChanged).length, statuses + 1);
      assert.equal(lastState().status, 'idle');
      const expired = w.bus
        .on(AppChannels.activityEntryNew)
        .map((e) => e.entry as { id: string; content: Record<string, unknown> })
        .filter((e) => e.id === entryId);
      assert.equal(expired.at(-1)?.content.resolution !== undefined, true, 'the closed entry is announced');
      await w.runs.expireEscalation(UNKNOWN_APP, entryId, 'r1'); // a deleted app: nothing to do
    });
  });

  describe('finishRun and failRun', () => {
    it('records run_complete for a complete report, pushes it to channels and marks the app ok', async () => {
      const { runId } = await w.runs.startRun(app.id, { type: 'manual' });
      await w.runs.finishRun(app.id, runId!, { type: 'complete', summary: 'Done', data: [1] }, 'manual');
      assert.deepEqual(activity('run_complete')[0]?.content, { summary: 'Done', data: [1] });
      assert.deepEqual(w.listener.results, [{ appId: app.id, runId, type: 'complete', summary: 'Done' }]);
      const { automation } = await stored();
      assert.deepEqual([automation.runningCount, automation.lastStatus, automation.lastError], [0, 'ok', null]);
      assert.deepEqual(w.metrics.of('runFinished'), [['manual', 'completed']]);
    });

    it('writes no run_complete after an output report, and records nothing for a deleted app', async () => {
      await w.runs.finishRun(app.id, 'r1', { type: 'output', summary: 'x' });
      assert.deepEqual(activity(), []);
      assert.equal((await stored()).automation.lastStatus, 'ok');
      await w.runs.finishRun(UNKNOWN_APP, 'r1', { type: 'complete', summary: 'x' });
      await w.runs.failRun(UNKNOWN_APP, 'r1', 'boom');
      assert.equal(w.appRepo.activity.length, 0);
      assert.deepEqual(w.metrics.of('runFinished'), [
        ['unknown', 'completed'],
        ['unknown', 'completed'],
        ['unknown', 'failed'],
      ]);
    });

    it('records run_error with the reason, marked interrupted or outage, and the app in error', async () => {
      await w.runs.failRun(app.id, 'r1', 'model failed', false, 'manual');
      await w.runs.failRun(app.id, 'r2', 'stopped', true, 'schedule', true);
      assert.deepEqual(
        activity('run_error').map((e) => e.content),
        [{ error: 'model failed' }, { error: 'stopped', interrupted: true, outage: true }],
      );
      const { automation } = await stored();
      assert.deepEqual([automation.runningCount, automation.lastStatus, automation.lastError], [0, 'error', 'stopped']);
      assert.deepEqual(w.metrics.of('runFinished'), [
        ['manual', 'failed'],
        ['schedule', 'interrupted'],
      ]);
    });

    it('tells the scheduler a run ended', async () => {
      await w.runs.runEnded(app.id);
      assert.deepEqual(w.scheduler.ended, [app.id]);
    });
  });

  describe('nudge', () => {
    it('queues the next turn of the run with the reminder; false while a turn is still active', async () => {
      const { runId } = await w.runs.startRun(app.id, { type: 'manual' });
      assert.equal(await w.runs.nudge(app.id, runId!, 's1', 1, 'manual'), false);
      await endRun();
      assert.equal(await w.runs.nudge(app.id, runId!, 's1', 1, 'manual'), true);
      const reminder = (await runMessages()).at(-1);
      assert.equal(reminder?.content, RunTexts.nudge);
      assert.deepEqual(reminder?.meta, { runId, nudge: 1 });
      assert.deepEqual((await activeRun())?.request, {
        appId: app.id,
        runId,
        nudges: 1,
        triggerType: 'manual',
        messageId: reminder?.id,
      });
      await endRun();
      await w.runs.nudge(app.id, runId!, 's1', 2);
      assert.equal('triggerType' in (await activeRun())!.request, false);
    });
  });

  describe('tool approvals', () => {
    const pending: PendingApproval = {
      toolId: 'tool-1',
      name: 'Bash',
      input: { command: 'ls' },
      deadline: '2026-03-01T10:10:00.000Z',
      requestedAt: '2026-03-01T10:00:00.000Z',
    };
    const runTurn = async () => {
      await w.runs.startRun(app.id, { type: 'manual' }, { runId: 'r1' });
      return (await activeRun())!;
    };

    it('records a held call as an approval entry and sets the app waiting on its user', async () => {
      const turn = await runTurn();
      await w.approvals.held(turn, pending);
      const [entry] = activity('approval');
      assert.equal(entry?.id, `approval-${turn.id}-tool-1`);
      assert.equal(entry?.runId, 'r1');
      assert.deepEqual(entry?.content, {
        toolId: 'tool-1',
        name: 'Bash',
        input: { command: 'ls' },
        deadline: pending.deadline,
      });
      assert.equal((await stored()).status, 'waiting_user');
      assert.equal(lastState().status, 'waiting_user');
    });

    it('writes the decision into the entry and makes the app active again', async () => {
      const turn = await runTurn();
      await w.approvals.held(turn, pending);
      await w.approvals.decided(turn, pending, {
        requestedAt: pending.requestedAt,
        deadline: pending.deadline,
        outcome: 'approved',
        decidedBy: 'web',
        decidedAt: '2026-03-01T10:01:00.000Z',
      });
      assert.deepEqual(activity('approval')[0]?.content, {
        toolId: 'tool-1',
        name: 'Bash',
        input: { command: 'ls' },
        deadline: pending.deadline,
        outcome: 'approved',
        decidedBy: 'web',
        decidedAt: '2026-03-01T10:01:00.000Z',
      });
      assert.equal((await stored()).status, 'active');
    });

    it('keeps the app waiting when a question opened meanwhile, and ignores turns that are not runs', async () => {
      const turn = await runTurn();
      await w.approvals.held(turn, pending);
      await w.runs.recordReport(app.id, 'r1', { type: 'escalation', summary: 'Q' });
      await w.approvals.decided(turn, pending, {
        requestedAt: pending.requestedAt,
        deadline: pending.deadline,
        outcome: 'rejected',
        decidedBy: 'channel',
        channelUser: { channel: 'telegram', instanceId: 'i1', userId: 'u1' },
        decidedAt: '2026-03-01T10:02:00.000Z',
        reason: 'not now',
      });
      const { channelUser, reason } = activity('approval')[0]!.content;
      assert.deepEqual([channelUser, reason], [{ channel: 'telegram', instanceId: 'i1', userId: 'u1' }, 'not now']);
      assert.equal((await stored()).status, 'waiting_user');

      const chat = { ...turn, kind: 'chat' as const, id: 'chat-turn' };
      const before = w.appRepo.activity.length;
      await w.approvals.held(chat, pending);
      assert.equal(w.appRepo.activity.length, before);
    });
  });

  describe('start-up registration', () => {
    it("hands the triggers a run starter that starts, skips, reads a run's messages and pauses", async () => {
      const starter = w.scheduler.starter!;
      const started = await starter.startRun(app.id, { type: 'schedule' });
      assert.equal(started.outcome, 'started');
      assert.equal((await starter.runMessages(app, started.runId!)).length, 1);
      assert.deepEqual(await w.runs.runMessages(app, 'other'), []);
      await starter.skipRun(app.id, 'backing off');
      assert.equal(activity('run_skipped').length, 1);
      await starter.pause(app.id);
      assert.equal((await stored()).status, 'paused');
    });
  });
});
