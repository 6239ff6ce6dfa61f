import type { ApiRetryInfo, Thought } from '#contracts/agent.js';
import type {
  AbortReason,
  PostedQuestion,
  TurnFailure,
  TurnIO,
  TurnPlan,
  TurnResult,
} from '#core/agent/engine/turn-plan.js';
import { ToolSet } from '#core/agent/engine/tool-set.js';
import { TurnInterrupted } from '#core/agent/engine/agent-loop.js';
import type { ModelMessage } from '#core/ports/model-provider.port.js';
import type { Space } from '#core/kernel/space.js';

export interface RecordedEvent {
  channel: string;
  payload: Record<string, unknown>;
}

export interface RecordingTurnOptions {
  tools?: ToolSet;
  history?: ModelMessage[];
  system?: string;
  contextTokens?: number;
  maxSteps?: number;
  /** Offer the question channel (default true). */
  questions?: boolean;
  /** The io of a real runner instead of the recording one (hooks still record). */
  io?: TurnIO;
}

/**
 * A TurnPlan whose io and hooks record everything the agent loop does, for engine tests:
 * events (awaited and fired alike), saved retries and thoughts, questions, results. The
 * test adds pending input, answers questions and stops the turn through it.
 */
export class RecordingTurn {
  readonly events: RecordedEvent[] = [];
  readonly retries: Array<ApiRetryInfo | null> = [];
  readonly savedThoughts: Thought[][] = [];
  readonly pendingInput: string[] = [];
  readonly posted: PostedQuestion[] = [];
  readonly compactions: Array<{ summary: string; preTokens: number }> = [];
  cleared = 0;
  completed: TurnResult | null = null;
  failed: TurnFailure | null = null;
  readonly plan: TurnPlan;
  private readonly controller = new AbortController();
  private reason: AbortReason | null = null;
  private answer: ((answers: Record<string, unknown>) => void) | null = null;
  private earlyAnswer: Record<string, unknown> | null = null;
  private readonly questionWaiters: Array<() => void> = [];

  constructor(options: RecordingTurnOptions = {}) {
    const record = (channel: string, payload: object): void => {
      this.events.push({ channel, payload: payload as Record<string, unknown> });
    };
    this.plan = {
      system: options.system ?? 'You are a test assistant.',
      tools: options.tools ?? new ToolSet(),
      history: options.history ?? [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      model: {
        endpoint: { provider: 'anthropic', apiUrl: 'http://model.invalid', apiKey: 'test' },
        model: 'fake-model',
        info: { contextWindow: 200_000, maxOutputTokens: 8_192, pricing: { input: 3, output: 15 } },
        effort: 'off',
      },
      workspace: {
        id: 'space-1',
        name: 'Test',
        icon: 'folder',
        color: null,
        path: '/tmp/fake-workspace',
        isTemp: false,
        ownsFolder: false,
        sortOrder: 0,
        preferences: {},
        createdAt: new Date(0),
        updatedAt: new Date(0),
      } satisfies Space,
      contextTokens: options.contextTokens ?? 0,
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      io: options.io ?? {
        label: 'test turn',
        emit: async (channel, payload) => record(channel, payload),
        fire: (channel, payload) => record(channel, payload),
        signal: this.controller.signal,
        abortReason: () => this.reason ?? 'stop',
        takePendingInput: async () => this.pendingInput.splice(0),
        historyHolds: () => undefined,
        saveRetry: async (retry) => {
          this.retries.push(retry);
        },
        saveThoughts: async (thoughts) => {
          this.savedThoughts.push(structuredClone(thoughts));
        },
        ...(options.questions === false
          ? {}
          : {
              questions: {
                post: async (question) => {
                  this.posted.push(question);
                  this.questionWaiters.splice(0).forEach((wake) => wake());
                },
                waitForAnswer: () =>
                  new Promise<Record<string, unknown>>((resolve, reject) => {
                    if (this.earlyAnswer) return resolve(this.earlyAnswer);
                    this.answer = resolve;
                    const onAbort = (): void => reject(new TurnInterrupted(this.reason ?? 'stop'));
                    if (this.controller.signal.aborted) onAbort();
                    else this.controller.signal.addEventListener('abort', onAbort, { once: true });
                  }),
                clear: async () => {
                  this.cleared++;
                },
              },
            }),
      },
      hooks: {
        onComplete: async (result) => {
          this.completed = result;
        },
        onFailure: async (failure) => {
          this.failed = failure;
        },
        onCompacted: async (compaction) => {
          this.compactions.push(compaction);
        },
      },
    };
  }

  /** Stops the turn as a user's stop (or a shutdown) would. */
  abort(reason: AbortReason = 'stop'): void {
    this.reason = reason;
    this.controller.abort();
  }

  /** Resolves once the loop has posted a question. */
  questionPosted(): Promise<PostedQuestion> {
    if (this.posted.length > 0) return Promise.resolve(this.posted[this.posted.length - 1]!);
    return new Promise((resolve) => this.questionWaiters.push(() => resolve(this.posted[this.posted.length - 1]!)));
  }

  /** Answers the posted question, whether or not the loop is waiting yet. */
  answerQuestion(answers: Record<string, unknown>): void {
    if (this.answer) this.answer(answers);
    else this.earlyAnswer = answers;
    this.answer = null;
  }

  channels(): string[] {
    return this.events.map((e) => e.channel);
  }

  eventsOn(channel: string): Array<Record<string, unknown>> {
    return this.events.filter((e) => e.channel === channel).map((e) => e.payload);
  }
}
