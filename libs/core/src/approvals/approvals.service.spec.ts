import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AgentInternalChannels, type ApprovalRecord } from '#contracts/agent.js';
import { ErrorCodes } from '#contracts/errors.js';
import { FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import { FakeConversationRepository } from '#testing/fake-conversations.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { FakeClock, RecordingMetrics } from '#testing/fakes.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import type { App } from '../kernel/app.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import type { PendingApproval, TurnRecord } from '../ports/turn.repository.port.js';
import { RejectionReasons } from './approval-policy.js';
import { approvalKey, ApprovalTexts, ApprovalsService } from './approvals.service.js';

Logger.overrideLogger(false);

const refusal = (kind: DomainError['kind'], message: string, code?: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  if (code !== undefined) assert.equal(err.reason, code);
  return true;
};

const pending = (toolId: string, name = 'Bash'): PendingApproval => ({
  toolId,
  name,
  input: { command: 'ls' },
  deadline: '2025-01-01T12:10:00.000Z',
  requestedAt: '2025-01-01T12:00:00.000Z',
});

describe('ApprovalsService', () => {
  let clock: FakeClock;
  let bus: RecordingEventBus;
  let turns: FakeTurnRepository;
  let apps: FakeAppRepository;
  let conversations: FakeConversationRepository;
  let metrics: RecordingMetrics;
  let models: ModelSourcesService;
  let service: ApprovalsService;

  beforeEach(() => {
    clock = new FakeClock();
    bus = new RecordingEventBus();
    turns = new FakeTurnRepository();
    apps = new FakeAppRepository();
    conversations = new FakeConversationRepository(turns);
    metrics = new RecordingMetrics();
    const config = { dataDir: '/data', modelSeed: null } as unknown as AppConfig;
    models = new ModelSourcesService(new FakeSettingsRepository(), bus, clock, config);
    service = new ApprovalsService(models, apps, conversations, turns, bus, clock, metrics);
    service.onModuleInit();
  });

  const configure = (approvals: unknown) => models.updateConfiguration({ approvals });

  /** An active turn of `conversationId` holding `held` (when given). */
  const activeTurn = async (
    id: string,
    conversationId: string,
    held: PendingApproval | null,
    extra: Partial<Pick<TurnRecord, 'kind' | 'request'>> = {},
  ) => {
    await turns.createQueued({
      id,
      kind: extra.kind ?? 'chat',
      conversationId,
      spaceId: 'space-1',
      request: extra.request ?? {},
    });
    if (held) await turns.setApproval(id, held);
  };

  const installApp = (id: string, userOverrides: Record<string, unknown>) => {
    apps.apps.set(id, { id, spaceId: null, userOverrides } as unknown as App);
  };

  describe('configuration check', () => {
    it('refuses a malformed approvals branch naming the field, and writes nothing', async () => {
      await assert.rejects(
        configure({ tools: ['Bash', ''] }),
        refusal('invalid', 'approvals.tools[1] must be a non-empty tool name pattern'),
      );
      await assert.rejects(
        configure({ tools: ['Bash'], timeoutSeconds: 0 }),
        (err: unknown) => err instanceof DomainError && /approvals\.timeoutSeconds/.test(err.message),
      );
      assert.equal(await models.storedBranch('approvals'), undefined);
    });

    it('accepts a valid policy', async () => {
      await configure({ tools: ['Bash'], timeoutSeconds: 30 });
      assert.deepEqual(await models.storedBranch('approvals'), { tools: ['Bash'], timeoutSeconds: 30 });
    });
  });

  describe('policy', () => {
    it('is null without any policy and for an empty tools list', async () => {
      assert.equal(await service.policyForConversation('c1'), null);
      await configure({ tools: [] });
      assert.equal(await service.policyForConversation('c1'), null);
    });

    it("is the configuration's for a plain conversation", async () => {
      await configure({ tools: ['Bash'], timeoutSeconds: 30 });
      assert.deepEqual(await service.policyForConversation('c1'), { tools: ['Bash'], timeoutSeconds: 30 });
    });

    it("a digital human's own override wins over the configuration, even an empty one", async () => {
      await configure({ tools: ['Bash'] });
      installApp('app-a', { approvals: { tools: ['Write'], timeoutSeconds: 5 } });
      installApp('app-b', { approvals: { tools: [] } });
      assert.deepEqual(await service.policyForConversation('app-chat:app-a'), { tools: ['Write'], timeoutSeconds: 5 });
      assert.equal(await service.policyForConversation('app-run:app-b'), null, 'an empty override holds nothing');
      assert.deepEqual(
        await service.policyForTurn({ kind: 'app-run', conversationId: 'x', request: { appId: 'app-a' } }),
        { tools: ['Write'], timeoutSeconds: 5 },
        "a run's request names its digital human",
      );
    });

    it("takes a turn's digital human as its plan read it, and reads it only when the plan names another", async () => {
      await configure({ tools: ['Bash'] });
      installApp('app-a', { approvals: { tools: ['Write'] } });
      const asPlanned = {
        id: 'app-a',
        spaceId: null,
        userOverrides: { approvals: { tools: ['Read'] } },
      } as unknown as App;
      const turn = { kind: 'app-run' as const, conversationId: 'x', request: { appId: 'app-a' } };
      let reads = 0;
      const findById = apps.findById.bind(apps);
      apps.findById = (id) => {
        reads++;
        return findById(id);
      };
      assert.deepEqual((await service.policyForTurn(turn, asPlanned))?.tools, ['Read'], "the plan's copy");
      assert.equal(reads, 0, 'not read again');
      const other = { ...asPlanned, id: 'app-b' } as App;
      assert.deepEqual(
        (await service.policyForTurn(turn, other))?.tools,
        ['Write'],
        "another app's copy is not the turn's",
      );
      assert.equal(reads, 1);
    });

    it("a conversation owned by a digital human by record meets that human's policy", async () => {
      installApp('app-a', { approvals: { tools: ['Write'] } });
      await conversations.create({
        id: '11111111-1111-4111-8111-111111111111',
        spaceId: 'space-1',
        title: 't',
        ephemeral: false,
        appId: 'app-a',
        reasoningEffort: null,
      });
      const policy = await service.policyForConversation('11111111-1111-4111-8111-111111111111');
      assert.deepEqual(policy?.tools, ['Write']);
    });
  });

  describe('answer', () => {
    it('without any policy, a missing or odd body is the no-op (false), nothing published', async () => {
      assert.equal(await service.answer({ approved: true, by: 'api' }), false);
      assert.equal(await service.answer({ conversationId: 'c1', toolId: 7, approved: true, by: 'api' }), false);
      assert.equal(await service.answer({ conversationId: 'c1', approved: true, by: 'api' }), false);
      assert.deepEqual(bus.published, []);
    });

    it('with a policy, a missing conversationId is refused naming the field', async () => {
      await configure({ tools: ['Bash'] });
      await assert.rejects(
        service.answer({ approved: true, by: 'api' }),
        refusal('invalid', ApprovalTexts.conversationRequired),
      );
      await assert.rejects(
        service.answer({ conversationId: 42, approved: true, by: 'api' }),
        refusal('invalid', ApprovalTexts.conversationRequired),
      );
    });

    it('with a policy, a toolId or reason that is no string is refused naming it', async () => {
      await configure({ tools: ['Bash'] });
      await assert.rejects(
        service.answer({ conversationId: 'c1', toolId: 3, approved: true, by: 'api' }),
        refusal('invalid', 'toolId must be a string'),
      );
      await assert.rejects(
        service.answer({ conversationId: 'c1', reason: ['x'], approved: false, by: 'api' }),
        refusal('invalid', 'reason must be a string'),
      );
    });

    it('with a policy and nothing waiting, answers a conflict with its code', async () => {
      await configure({ tools: ['Bash'] });
      await activeTurn('t1', 'c1', null);
      await assert.rejects(
        service.answer({ conversationId: 'c1', approved: true, by: 'api' }),
        refusal('conflict', ApprovalTexts.nothingWaits, ErrorCodes.NO_APPROVAL_PENDING),
      );
      assert.deepEqual(bus.on(AgentInternalChannels.answer), [], 'no turn is woken');
    });

    it('records an approval once, stamped by the clock, and wakes the turn', async () => {
      await configure({ tools: ['Bash'] });
      await activeTurn('t1', 'c1', pending('tool-1'));
      bus.published.length = 0;
      assert.equal(await service.answer({ conversationId: 'c1', approved: true, by: 'web' }), true);
      assert.deepEqual(turns.records.get('t1')?.approvalDecision, {
        approved: true,
        by: 'web',
        at: new Date(clock.now()).toISOString(),
      });
      assert.deepEqual(bus.on(AgentInternalChannels.answer), [{ turnId: 't1' }]);
      await assert.rejects(
        service.answer({ conversationId: 'c1', approved: false, by: 'api' }),
        refusal('conflict', ApprovalTexts.nothingWaits),
        'a second answer finds nothing waiting',
      );
      assert.equal(turns.records.get('t1')?.approvalDecision?.approved, true, 'the first answer stands');
    });

    it('a rejection carries its trimmed reason, cut at 2000 characters, or the default reason', async () => {
      await configure({ tools: ['Bash'] });
      await activeTurn('t1', 'c1', pending('tool-1'));
      await service.answer({ conversationId: 'c1', approved: false, reason: `  ${'r'.repeat(2_500)}  `, by: 'api' });
      assert.equal(turns.records.get('t1')?.approvalDecision?.reason, 'r'.repeat(2_000));

      await activeTurn('t2', 'c2', pending('tool-2'));
      await service.answer({ conversationId: 'c2', approved: false, reason: '   ', by: 'api' });
      assert.equal(turns.records.get('t2')?.approvalDecision?.reason, RejectionReasons.none);
    });

    it('a toolId answers only that call', async () => {
      await configure({ tools: ['Bash'] });
      await activeTurn('t1', 'c1', pending('tool-1'));
      await assert.rejects(
        service.answer({ conversationId: 'c1', toolId: 'other', approved: true, by: 'api' }),
        refusal('conflict', ApprovalTexts.nothingWaits),
      );
      assert.equal(turns.records.get('t1')?.approvalDecision, null);
      assert.equal(await service.answer({ conversationId: 'c1', toolId: 'tool-1', approved: true, by: 'api' }), true);
    });

    it('a channel answer records the platform user who gave it', async () => {
      await activeTurn('t1', 'c1', pending('tool-1'));
      const channelUser = { channel: 'ch-1', userId: 'u-9' } as never;
      await service.answer({ conversationId: 'c1', approved: true, by: 'channel', channelUser });
      assert.deepEqual(turns.records.get('t1')?.approvalDecision?.channelUser, channelUser);
    });
  });

  describe('waiting', () => {
    it('offers the held call with its stable key until it is decided', async () => {
      assert.equal(await service.waiting('c1'), null);
      await activeTurn('t1', 'c1', pending('tool-1'));
      const waiting = await service.waiting('c1');
      assert.deepEqual(waiting, {
        conversationId: 'c1',
        turnId: 't1',
        pending: pending('tool-1'),
        key: approvalKey('t1', 'tool-1'),
      });
      await service.answer({ conversationId: 'c1', approved: true, by: 'api' });
      assert.equal(await service.waiting('c1'), null);
    });

    it('offers nothing for a stopped turn', async () => {
      await activeTurn('t1', 'c1', pending('tool-1'));
      turns.records.get('t1')!.stopRequested = true;
      assert.equal(await service.waiting('c1'), null);
    });
  });

  describe('approvalKey', () => {
    it('is 16 hex characters, stable, and differs by turn and by tool', () => {
      const key = approvalKey('t1', 'tool-1');
      assert.match(key, /^[0-9a-f]{16}$/);
      assert.equal(approvalKey('t1', 'tool-1'), key);
      assert.notEqual(approvalKey('t2', 'tool-1'), key);
      assert.notEqual(approvalKey('t1', 'tool-2'), key);
    });
  });

  describe('watchers', () => {
    it('hear of held and decided calls; a failing watcher does not stop the others; decisions are counted', async () => {
      const heard: string[] = [];
      service.watch({
        held: async () => {
          throw new Error('boom');
        },
        decided: async () => {
          throw new Error('boom');
        },
      });
      service.watch({
        held: async (turn, p) => void heard.push(`held ${turn.id} ${p.toolId}`),
        decided: async (turn, p, r) => void heard.push(`decided ${turn.id} ${p.toolId} ${r.outcome}`),
      });
      await activeTurn('t1', 'c1', pending('tool-1'));
      const turn = (await turns.findById('t1'))!;
      await service.held(turn, pending('tool-1'));
      const record: ApprovalRecord = {
        requestedAt: '2025-01-01T12:00:00.000Z',
        deadline: '2025-01-01T12:10:00.000Z',
        outcome: 'rejected',
        decidedBy: 'api',
      };
      await service.decided(turn, pending('tool-1'), record);
      assert.deepEqual(heard, ['held t1 tool-1', 'decided t1 tool-1 rejected']);
      assert.deepEqual(metrics.of('toolApproval'), [['rejected']]);
    });

    it('a decision without an outcome is not counted', async () => {
      await activeTurn('t1', 'c1', pending('tool-1'));
      const turn = (await turns.findById('t1'))!;
      await service.decided(turn, pending('tool-1'), { requestedAt: 'a', deadline: 'b' });
      assert.deepEqual(metrics.of('toolApproval'), []);
    });
  });
});
