import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AgentChannels, AgentInternalChannels, type TurnKind } from '#contracts/agent.js';
import { FakeEventLog, FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeModelProvider, hangingResponse, textResponse, toolUseResponse } from '#testing/fake-model-provider.js';
import { FakeClock } from '#testing/fakes.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { RecordingTurn } from '#testing/recording-turn.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import { ConversationEvents } from './conversation-events.js';
import { AgentLoop } from './engine/agent-loop.js';
import { ToolSet } from './engine/tool-set.js';
import type { TurnIO, TurnPlan } from './engine/turn-plan.js';
import { askUserQuestionTool } from './tools/ask-user-question-tool.js';
import { TurnTexts } from './turn-endings.js';
import { refuseTurn, skipTurn, TurnPlanBuilder, type TurnRefusal } from './turn-plan-builder.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';
import { TurnRunner } from './turn-runner.js';
import type { ChatPlanBuilder } from './chat-plan-builder.js';

/** A builder of one kind whose plans are RecordingTurns on the runner's io. */
class StubBuilder extends TurnPlanBuilder {
  readonly built: TurnRecord[] = [];
  recording: RecordingTurn | null = null;

  constructor(
    readonly kind: TurnKind,
    private readonly make: (io: TurnIO) => RecordingTurn | TurnRefusal,
  ) {
    super();
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    this.built.push(turn);
    const made = this.make(io);
    if ('refused' in made) return made;
    this.recording = made;
    return made.plan;
  }
}

describe('TurnRunner', () => {
  let turns: FakeTurnRepository;
  let bus: RecordingEventBus;
  let provider: FakeModelProvider;
  let chat: StubBuilder;
  /** How the chat builder makes its plans; a test may change it before running. */
  let chatPlan: (io: TurnIO) => RecordingTurn | TurnRefusal;
  let builders: TurnPlanBuilders;
  let runner: TurnRunner;
  /** Where the runner queues follow-up turns. */
  let jobs: RecordingJobQueue;

  beforeEach(() => {
    turns = new FakeTurnRepository();
    bus = new RecordingEventBus();
    provider = new FakeModelProvider();
    chatPlan = (io) => new RecordingTurn({ io });
    chat = new StubBuilder('chat', (io) => chatPlan(io));
    builders = new TurnPlanBuilders(chat as unknown as ChatPlanBuilder);
    const clock = new FakeClock();
    jobs = new RecordingJobQueue();
    runner = new TurnRunner(
      turns,
      builders,
      new AgentLoop(provider, clock, { maxSteps: 5, maxRetries: 0, retryBaseMs: 1, maxOutputTokens: 1000 }),
      new ConversationEvents(bus, new FakeEventLog()),
      bus,
      clock,
      undefined,
      undefined,
      undefined,
      undefined,
      jobs,
    );
    runner.onModuleInit();
  });

  afterEach(() => runner.onApplicationShutdown());

  const queue = async (kind: TurnKind = 'chat', conversationId = 'c-1'): Promise<string> =>
    (await turns.createQueued({
      id: `turn-${kind}-${conversationId}`,
      kind,
      conversationId,
      spaceId: 's-1',
      request: {},
    }))!.id;

  it('a turn runs on the plan of its kind, ends completed, then the plan’s afterCompleted runs', async () => {
    const run = new StubBuilder('app-run', (io) => {
      const turn = new RecordingTurn({ io });
      turn.plan.hooks.afterCompleted = async () => {
        statusAfter = (await turns.findById(id))?.status;
      };
      return turn;
    });
    let statusAfter: string | undefined;
    builders.register(run);
    provider.respond(textResponse('Report ready'));
    const id = await queue('app-run', 'app-run:r-1');
    await runner.run(id, 'app-run');

    assert.equal(chat.built.length, 0);
    assert.equal(run.built[0]?.kind, 'app-run');
    assert.equal(run.recording?.completed?.reply, 'Report ready');
    assert.equal((await turns.findById(id))?.status, 'completed');
    assert.equal(statusAfter, 'completed');
    const complete = bus.on(AgentChannels.complete);
    assert.equal(complete.length, 1);
    assert.equal(complete[0]?.conversationId, 'app-run:r-1');
    assert.equal((complete[0]?.tokenUsage as { inputTokens: number }).inputTokens, 100);
    assert.deepEqual(bus.channels().slice(-2), [AgentChannels.message, AgentChannels.complete]);
  });

  it('input that reaches a turn after its last step gets a follow-up turn of its own, announced after agent:complete', async () => {
    chatPlan = (io) => {
      const turn = new RecordingTurn({ io });
      // The message arrives while the reply is being recorded: no step of this turn reads it.
      turn.plan.hooks.onComplete = async () => {
        await turns.addPendingInput('c-1', {
          messageId: 'm-late',
          content: 'one more thing',
          createdAt: new Date(0).toISOString(),
          kind: 'chat',
          request: { messageId: 'm-late', reasoningEffort: 'low' },
        });
      };
      return turn;
    };
    provider.respond(textResponse('Done'));
    const id = await queue();
    await runner.run(id);

    assert.equal((await turns.findById(id))?.status, 'completed');
    const followUp = (await turns.findActive('c-1'))!;
    assert.ok(followUp, 'a follow-up turn is queued');
    assert.deepEqual(
      [followUp.status, followUp.kind, followUp.request],
      ['queued', 'chat', { messageId: 'm-late', reasoningEffort: 'low' }],
    );
    assert.deepEqual(
      jobs.named('agent.turn').map((j) => j.data),
      [{ turnId: followUp.id, kind: 'chat' }],
    );
    assert.deepEqual(bus.channels().slice(-2), [AgentChannels.complete, AgentChannels.turnStart]);
  });

  it('input recorded before the plan read its history is not handed over again; later input joins the first step', async () => {
    chatPlan = (io) => {
      io.historyHolds(['m-read']);
      return new RecordingTurn({ io });
    };
    provider.respond(textResponse('Done'));
    const id = await queue();
    for (const [messageId, content] of [
      ['m-read', 'already in the history'],
      ['m-later', 'came after the read'],
    ] as const)
      await turns.addPendingInput('c-1', { messageId, content, createdAt: new Date(0).toISOString() });
    await runner.run(id);

    const sent = JSON.stringify(provider.requests[0]?.messages);
    assert.ok(sent.includes('came after the read'), sent);
    assert.ok(!sent.includes('already in the history'), sent);
  });

  it('a turn with no late input queues nothing after it', async () => {
    provider.respond(textResponse('Done'));
    const id = await queue();
    await runner.run(id);
    assert.equal(await turns.findActive('c-1'), null);
    assert.equal(bus.on(AgentChannels.turnStart).length, 0);
  });

  it('a refused plan ends the turn as failed with the refusal’s error fields; the model is not called', async () => {
    chatPlan = () => refuseTurn('No model is configured.', { errorCode: 'NO_MODEL' });
    const id = await queue();
    await runner.run(id);

    assert.equal(provider.requests.length, 0);
    const record = await turns.findById(id);
    assert.deepEqual([record?.status, record?.error], ['failed', 'No model is configured.']);
    assert.deepEqual(
      bus.on(AgentChannels.error).map(({ error, errorCode }) => ({ error, errorCode })),
      [{ error: 'No model is configured.', errorCode: 'NO_MODEL' }],
    );
    assert.equal(bus.on(AgentChannels.complete).length, 1);
  });

  it('a skipped turn (nothing to do) ends completed with no agent:error; its afterEnded runs after the record ends', async () => {
    let statusAfter: string | undefined;
    chatPlan = () =>
      skipTurn('Nothing waits in this member’s mailbox.', async () => {
        statusAfter = (await turns.findById(id))?.status;
      });
    const id = await queue();
    await runner.run(id);

    assert.equal(provider.requests.length, 0);
    const record = await turns.findById(id);
    assert.equal(record?.status, 'completed');
    assert.equal(statusAfter, 'completed');
    assert.deepEqual(bus.on(AgentChannels.error), []);
    // Its agent:complete closes the agent:turn-start it was queued with; nothing else is said.
    assert.deepEqual(bus.channels(), [AgentChannels.complete]);
  });

  it('a kind nobody registered fails with that reason', async () => {
    const id = await queue('app-chat', 'app-chat:a-1');
    await runner.run(id, 'app-chat');
    assert.equal(
      (await turns.findById(id))?.error,
      'The turn failed: no plan builder is registered for app-chat turns',
    );
  });

  it('a stop heard before the claim answered ends the turn interrupted without building a plan', async () => {
    const id = await queue();
    // The stop route saw the turn running and published its stop before this replica heard its claim back.
    const claim = turns.claim.bind(turns);
    Object.assign(turns, {
      claim: async (turnId: string, replicaId: string) => {
        const claimed = await claim(turnId, replicaId);
        turns.records.get(id)!.stopRequested = true;
        await bus.publish(AgentInternalChannels.stop, { turnIds: [id] });
        return claimed;
      },
    });
    await runner.run(id);
    assert.equal(chat.built.length, 0);
    assert.equal((await turns.findById(id))?.status, 'interrupted');
    assert.deepEqual(bus.on(AgentChannels.error)[0]?.errorType, 'interrupted');
  });

  it('every end clears its unannounced-end mark once its events are published', async () => {
    const seenWhenCleared: string[][] = [];
    const endAnnounced = turns.endAnnounced.bind(turns);
    turns.endAnnounced = async (id) => {
      seenWhenCleared.push(bus.channels());
      await endAnnounced(id);
    };
    provider.respond(textResponse('Done'));
    await runner.run(await queue('chat', 'c-completed'));
    chatPlan = () => refuseTurn('No model is configured.', { errorCode: 'NO_MODEL' });
    await runner.run(await queue('chat', 'c-failed'));
    chatPlan = () => skipTurn('Nothing to do.');
    await runner.run(await queue('chat', 'c-skipped'));

    assert.deepEqual(await turns.findUnannounced(new Date(Date.now() + 60_000)), []);
    assert.equal(seenWhenCleared.length, 3);
    for (const seen of seenWhenCleared) assert.equal(seen.at(-1), AgentChannels.complete, seen.join());
  });

  it('an end whose events could not be published keeps its mark, for the reaper', async () => {
    const publish = bus.publish.bind(bus);
    bus.publish = async (channel, data) => {
      if (channel === AgentChannels.complete) throw new Error('the event log is away');
      await publish(channel, data);
    };
    provider.respond(textResponse('Done'));
    const id = await queue();
    await runner.run(id);
    assert.equal((await turns.findById(id))?.status, 'completed');
    assert.deepEqual(
      (await turns.findUnannounced(new Date(Date.now() + 60_000))).map((t) => t.id),
      [id],
    );
  });

  it('a turn that is no longer queued is left alone', async () => {
    const id = await queue();
    await turns.finish(id, 'interrupted', 'stopped');
    await runner.run(id);
    assert.equal(chat.built.length, 0);
    assert.equal(bus.published.length, 0);
  });

  it('a question waits in the turn record; an answer from any replica resumes the turn', async () => {
    chatPlan = (io) => new RecordingTurn({ io, tools: new ToolSet([askUserQuestionTool()]) });
    provider.respond(
      toolUseResponse([{ id: 'tu-1', name: 'AskUserQuestion', input: { questions: [{ question: 'Go?' }] } }]),
      textResponse('Going'),
    );
    const id = await queue();
    const running = runner.run(id);
    const question = await waitUntil(async () => (await turns.findById(id))?.pendingQuestion ?? null);
    assert.equal(question.toolUseId, 'tu-1');
    assert.equal(bus.on(AgentChannels.askQuestion)[0]?.id, question.id);

    assert.equal(await turns.answerQuestion('c-1', question.id, { 'Go?': 'yes' }), true);
    await bus.publish(AgentInternalChannels.answer, { turnId: id });
    await running;

    const record = await turns.findById(id);
    assert.equal(record?.status, 'completed');
    assert.equal(record?.pendingQuestion, null);
    assert.equal(chat.recording?.completed?.reply, 'Going');
  });

  it('a stop through the bus interrupts the running turn and voids input that waited for the next step', async () => {
    provider.respond(hangingResponse('Working on'));
    const id = await queue();
    const running = runner.run(id);
    await waitUntil(async () => bus.on(AgentChannels.message).find((m) => m.delta === 'Working on') ?? null);
    await turns.addPendingInput('c-1', { messageId: 'm-9', content: 'and also', createdAt: 'now' });
    await turns.requestStop('c-1');
    await bus.publish(AgentInternalChannels.stop, { turnIds: [id] });
    await running;

    const record = await turns.findById(id);
    assert.deepEqual([record?.status, record?.error], ['interrupted', TurnTexts.stopped]);
    assert.equal(chat.recording?.failed?.reply, 'Working on');
    assert.deepEqual(bus.on(AgentChannels.inputStopped)[0]?.messages, [
      { id: 'm-9', role: 'user', content: 'and also' },
    ]);
    assert.deepEqual(bus.channels().slice(-3), [
      AgentChannels.inputStopped,
      AgentChannels.error,
      AgentChannels.complete,
    ]);
  });
});

async function waitUntil<T>(check: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await check();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('condition not reached');
}
