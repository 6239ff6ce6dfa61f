import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  AgentChannels,
  AgentInternalChannels,
  type ApiRetryInfo,
  type AskQuestion,
  type Thought,
  type TokenUsageDto,
} from '#contracts/agent.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { MemoryConsolidationService } from '../memory/memory-consolidation.service.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import {
  ModelCallError,
  type ModelContentBlock,
  type ModelEndpoint,
  type ModelInfo,
  type ModelMessage,
  ModelProvider,
  type ReasoningEffort,
  type StopReason,
  type TokenUsage,
} from '../ports/model-provider.port.js';
import { type PendingInput, type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import type { Space } from '../spaces/space.js';
import { SpacesService } from '../spaces/spaces.service.js';
import {
  buildHistory,
  COMPACTION_KIND,
  COMPACTION_THRESHOLD,
  estimateTokens,
  systemPrompt,
} from './context-builder.js';
import { ConversationEvents } from './conversation-events.js';
import { type Emit, type Fire, StepEmitter } from './step-emitter.js';
import { ASK_USER_QUESTION, ToolRegistry } from './tool-registry.js';
import { ToolInputError } from './tools/tool.js';

export const TurnTexts = {
  stopped: 'Stopped by user.',
  shutdown: 'The server is shutting down; the reply was interrupted.',
  replicaLost: 'The server running this reply stopped; the reply was interrupted.',
  questionCancelled: 'Question cancelled: the user stopped generation before answering.',
  stepLimit: 'Reached the maximum turn limit. Send a message to continue.',
  noModel:
    'No model is configured. Add a model source with POST /api/ai-sources/sources ' +
    '(provider, apiUrl, apiKey, model), or start the server with SVC_AI_API_KEY, SVC_AI_API_URL, ' +
    'SVC_AI_PROVIDER (anthropic or openai) and SVC_AI_MODEL.',
  workDirMissing: 'The workspace folder does not exist.',
} as const;

const HEARTBEAT_MS = 5_000;
const QUESTION_POLL_MS = 1_000;

/** Why a running turn was aborted. */
type AbortReason = 'stop' | 'shutdown';

class TurnInterrupted extends Error {
  constructor(readonly reason: AbortReason) {
    super(reason === 'stop' ? TurnTexts.stopped : TurnTexts.shutdown);
  }
}

interface LocalTurn {
  abort: AbortController;
  reason: AbortReason | null;
  /** Wakes a turn waiting for an answer to its question. */
  wake: (() => void) | null;
}

interface TurnState {
  turn: TurnRecord;
  space: Space;
  emit: Emit;
  fire: Fire;
  signal: AbortSignal;
  thoughts: Thought[];
  replyParts: string[];
  usage: TokenUsage;
  lastContextTokens: number;
  info: ModelInfo;
  endpoint: ModelEndpoint;
  model: string;
  effort: ReasoningEffort;
  system: string;
  history: ModelMessage[];
  startedAt: number;
}

/**
 * Runs assistant turns (the `agent.turn` job): streams the model, runs tools, feeds results
 * back and repeats until the model ends; every step goes out as conversation events and the
 * state clients recover from lives in the turn record. Stops and answers reach the replica
 * running the turn through internal bus events.
 */
@Injectable()
export class TurnRunner implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('AgentTurns');
  private readonly local = new Map<string, LocalTurn>();
  private unsubscribe: (() => void) | null = null;
  readonly replicaId = `${process.pid}-${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly turns: TurnRepository,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly tools: ToolRegistry,
    private readonly events: ConversationEvents,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly memory: MemoryConsolidationService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel === AgentInternalChannels.stop) {
        for (const id of (event.data.turnIds as string[] | undefined) ?? []) this.abortLocal(id, 'stop');
      } else if (event.channel === AgentInternalChannels.answer) {
        const id = event.data.turnId as string | undefined;
        if (id) this.local.get(id)?.wake?.();
      }
    });
  }

  /**
   * SIGTERM: running turns end now, recorded as interrupted (with their events), waiting up
   * to `timeoutMs` for them to finish recording.
   */
  async interruptAll(timeoutMs: number): Promise<void> {
    for (const id of this.local.keys()) this.abortLocal(id, 'shutdown');
    const deadline = this.clock.now() + timeoutMs;
    while (this.local.size > 0 && this.clock.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
    for (const id of this.local.keys()) this.abortLocal(id, 'shutdown');
  }

  private abortLocal(turnId: string, reason: AbortReason): void {
    const local = this.local.get(turnId);
    if (!local || local.abort.signal.aborted) return;
    local.reason = reason;
    local.abort.abort();
    local.wake?.();
  }

  /** The `agent.turn` job. A turn that is no longer queued (stopped, or re-delivered) is left alone. */
  async run(turnId: string): Promise<void> {
    const queued = await this.turns.findById(turnId);
    if (!queued || queued.status !== 'queued') return;
    if (!(await this.turns.claim(turnId, this.replicaId))) return;
    const turn = { ...queued, status: 'running' as const };
    const local: LocalTurn = { abort: new AbortController(), reason: null, wake: null };
    this.local.set(turnId, local);
    const heartbeat = setInterval(() => void this.turns.heartbeat(turnId).catch(() => undefined), HEARTBEAT_MS);
    heartbeat.unref();
    const emit: Emit = async (channel, payload) => {
      await this.events.emit(turn.spaceId, turn.conversationId, channel, payload);
    };
    const startedAt = this.clock.now();
    const thoughts: Thought[] = [];
    const replyParts: string[] = [];
    let state: TurnState | null = null;
    try {
      // A stop that arrived between claim and now.
      if ((await this.turns.findById(turnId))?.stopRequested) throw new TurnInterrupted('stop');
      state = await this.prepare(turn, emit, local.abort.signal, thoughts, replyParts, startedAt);
      if (!state) return;
      await this.loop(state, local);
      await this.complete(state);
    } catch (err) {
      const interrupted = err instanceof TurnInterrupted || local.abort.signal.aborted;
      const reason: AbortReason = err instanceof TurnInterrupted ? err.reason : (local.reason ?? 'stop');
      await this.fail(turn, emit, state, thoughts, replyParts, startedAt, err, interrupted ? reason : null).catch(
        (e: Error) => this.logger.error(`turn ${turnId} could not record its end: ${e.message}`),
      );
    } finally {
      clearInterval(heartbeat);
      this.local.delete(turnId);
    }
  }

  private async prepare(
    turn: TurnRecord,
    emit: Emit,
    signal: AbortSignal,
    thoughts: Thought[],
    replyParts: string[],
    startedAt: number,
  ): Promise<TurnState | null> {
    const space = await this.spaces.get(turn.spaceId);
    const conversation = await this.conversations.get(turn.spaceId, turn.conversationId);
    const messages = conversation.messages;
    if (!messages.some((m) => m.role === 'assistant')) {
      await emit(AgentChannels.sessionInfo, { slashCommands: [], skills: [], agents: [] });
    }
    if (!(await this.spaces.folderExists(space))) {
      await this.endWithError(turn, emit, startedAt, TurnTexts.workDirMissing, {
        errorType: 'working_dir_unavailable',
        workDirIssue: { path: space.path, reason: 'missing' },
      });
      return null;
    }
    const resolved = await this.models.resolveForConversation(
      conversation.conversation.modelSourceId && conversation.conversation.modelId
        ? { modelSourceId: conversation.conversation.modelSourceId, modelId: conversation.conversation.modelId }
        : null,
    );
    if (!resolved) {
      await this.endWithError(turn, emit, startedAt, TurnTexts.noModel, { errorCode: 'NO_MODEL' });
      return null;
    }
    const memoryEnabled = this.spaces.preferencesOf(space).memory.enabled;
    const request = turn.request as { reasoningEffort?: ReasoningEffort; thinkingEnabled?: boolean };
    const effort: ReasoningEffort =
      conversation.conversation.reasoningEffort ??
      request.reasoningEffort ??
      (request.thinkingEnabled ? 'medium' : 'off');
    const info = this.provider.info(resolved.endpoint.provider, resolved.model);
    // Input that arrived before the turn started is already in the history.
    await this.turns.takePendingInputs(turn.id);
    return {
      turn,
      space,
      emit,
      fire: (channel, payload) => this.events.fire(turn.spaceId, turn.conversationId, channel, payload),
      signal,
      thoughts,
      replyParts,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
      // The context the previous reply ended with, so a long conversation compacts before it overflows.
      lastContextTokens: lastContextTokens(messages),
      info,
      endpoint: resolved.endpoint,
      model: resolved.model,
      effort,
      system: systemPrompt({
        workspacePath: space.path,
        now: new Date(this.clock.now()),
        memoryEnabled,
        toolNames: this.tools.names(),
      }),
      history: buildHistory(messages),
      startedAt,
    };
  }

  private async loop(state: TurnState, local: LocalTurn): Promise<void> {
    for (let step = 1; ; step++) {
      if (state.signal.aborted) throw new TurnInterrupted(local.reason ?? 'stop');
      await this.absorbInput(state);
      await this.compactIfNeeded(state);
      const response = await this.callModel(state);
      state.history.push({
        role: 'assistant',
        content: response.blocks.length > 0 ? response.blocks : [{ type: 'text', text: '' }],
      });
      const calls = response.emitter.toolCalls();
      if (calls.length === 0 || response.stopReason !== 'tool_use') return;
      const results: ModelContentBlock[] = [];
      for (const call of calls) {
        if (state.signal.aborted) throw new TurnInterrupted(local.reason ?? 'stop');
        const outcome =
          call.name === ASK_USER_QUESTION
            ? await this.askUser(state, local, call.id, call.input)
            : await this.runTool(state, call.name, call.input);
        await response.emitter.toolResult(call.id, outcome.output, outcome.isError);
        results.push({ type: 'tool_result', toolUseId: call.id, content: outcome.output, isError: outcome.isError });
      }
      state.history.push({ role: 'user', content: results });
      await this.turns.saveThoughts(state.turn.id, state.thoughts);
      if (step >= this.config.agent.maxSteps) throw new StepLimitReached();
    }
  }

  /** Input recorded while generating joins the conversation at the next step. */
  private async absorbInput(state: TurnState): Promise<void> {
    const inputs = await this.turns.takePendingInputs(state.turn.id);
    if (inputs.length === 0) return;
    const text = inputs.map((i) => i.content).join('\n\n');
    const last = state.history[state.history.length - 1];
    if (last?.role === 'user') last.content.push({ type: 'text', text });
    else state.history.push({ role: 'user', content: [{ type: 'text', text }] });
  }

  private async compactIfNeeded(state: TurnState): Promise<void> {
    const preTokens = Math.max(state.lastContextTokens, estimateTokens(state.history, state.system));
    if (preTokens < state.info.contextWindow * COMPACTION_THRESHOLD || state.history.length < 3) return;
    // Keep the current exchange; summarize everything before the last user message that is not a tool result.
    let keepFrom = state.history.length - 1;
    while (keepFrom > 0 && !isPlainUserMessage(state.history[keepFrom]!)) keepFrom--;
    const older = state.history.slice(0, keepFrom);
    if (older.length === 0) return;
    const summary = await this.summarize(state, older);
    if (summary === null) return;
    state.history = [
      { role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${summary}` }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Understood; continuing from that summary.' }] },
      ...state.history.slice(keepFrom),
    ];
    state.lastContextTokens = 0;
    await this.conversations.appendMessage(state.turn.conversationId, {
      role: 'system',
      content: summary,
      meta: { kind: COMPACTION_KIND, preTokens, turnId: state.turn.id },
    });
    await state.emit(AgentChannels.compact, { trigger: 'auto', preTokens });
  }

  private async summarize(state: TurnState, older: ModelMessage[]): Promise<string | null> {
    const transcript = older
      .map(
        (m) =>
          `${m.role.toUpperCase()}: ${m.content
            .map((b) =>
              b.type === 'text'
                ? b.text
                : b.type === 'tool_result'
                  ? `[tool result] ${b.content.slice(0, 2000)}`
                  : b.type === 'tool_use'
                    ? `[tool ${b.name}] ${JSON.stringify(b.input).slice(0, 500)}`
                    : '',
            )
            .filter(Boolean)
            .join('\n')}`,
      )
      .join('\n\n');
    let text = '';
    try {
      for await (const event of this.provider.stream(state.endpoint, {
        model: state.model,
        system: 'You compress conversations. Write a faithful summary that lets the assistant continue the work.',
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'text',
                text: `Summarize this conversation between a user and an assistant working in a workspace. Keep decisions, facts, file paths, open tasks and the user's requests.\n\n${transcript}`,
              },
            ],
          },
        ],
        tools: [],
        maxOutputTokens: 4096,
        reasoningEffort: 'off',
        signal: state.signal,
      })) {
        if (event.type === 'text_delta') text += event.delta;
        if (event.type === 'usage') addUsage(state.usage, event.usage);
      }
    } catch (err) {
      if (state.signal.aborted) throw err;
      this.logger.warn(`compaction failed for ${state.turn.conversationId}: ${(err as Error).message}`);
      return null;
    }
    return text.trim() === '' ? null : text.trim();
  }

  /** One model response, with retries of 429/5xx/network failures that happen before anything streamed. */
  private async callModel(
    state: TurnState,
  ): Promise<{ emitter: StepEmitter; blocks: ModelContentBlock[]; stopReason: StopReason }> {
    const { maxRetries, retryBaseMs, maxOutputTokens } = this.config.agent;
    let retried = false;
    for (let attempt = 0; ; attempt++) {
      const emitter = new StepEmitter(state.emit, state.thoughts, undefined, state.fire);
      let stopReason: StopReason = 'other';
      try {
        for await (const event of this.provider.stream(state.endpoint, {
          model: state.model,
          system: state.system,
          messages: state.history,
          tools: this.tools.specs(),
          maxOutputTokens: Math.min(maxOutputTokens, state.info.maxOutputTokens),
          reasoningEffort: state.effort,
          signal: state.signal,
        })) {
          if (event.type === 'usage') {
            addUsage(state.usage, event.usage);
            state.lastContextTokens =
              event.usage.inputTokens +
              event.usage.cacheReadTokens +
              event.usage.cacheCreationTokens +
              event.usage.outputTokens;
          } else if (event.type === 'end') {
            stopReason = event.stopReason;
          }
          await emitter.handle(event);
        }
        if (retried) await this.announceRetry(state, null);
        state.replyParts.push(...emitter.textBlocks);
        return { emitter, blocks: emitter.blocks, stopReason };
      } catch (err) {
        if (state.signal.aborted) {
          state.replyParts.push(...emitter.partialTextBlocks());
          throw err;
        }
        const failure = err instanceof ModelCallError ? err : null;
        if (failure?.retryable && !emitter.streamedAnything && attempt < maxRetries) {
          const delayMs = failure.retryAfterMs ?? Math.min(30_000, retryBaseMs * 2 ** attempt);
          retried = true;
          await this.announceRetry(state, {
            attempt: attempt + 1,
            maxRetries,
            delayMs,
            errorStatus: failure.status,
            errorKind: failure.kind,
            errorMessage: failure.message.slice(0, 500),
          });
          await sleep(delayMs, state.signal);
          continue;
        }
        state.replyParts.push(...emitter.partialTextBlocks());
        if (retried) await this.announceRetry(state, null);
        throw err;
      }
    }
  }

  private async announceRetry(state: TurnState, retry: ApiRetryInfo | null): Promise<void> {
    await this.turns.setRetry(state.turn.id, retry as Record<string, unknown> | null);
    await state.emit(AgentChannels.apiRetry, { retry });
  }

  private async runTool(
    state: TurnState,
    name: string,
    input: Record<string, unknown>,
  ): Promise<{ output: string; isError: boolean }> {
    const tool = this.tools.get(name);
    if (!tool) return { output: `Unknown tool: ${name}`, isError: true };
    try {
      return await tool.run(input, { space: state.space, signal: state.signal });
    } catch (err) {
      if (state.signal.aborted) throw err;
      if (err instanceof ToolInputError) return { output: err.message, isError: true };
      const message = (err as Error).message ?? String(err);
      this.logger.warn(`tool ${name} failed in turn ${state.turn.id}: ${message}`);
      return { output: `Tool failed: ${message}`, isError: true };
    }
  }

  /** AskUserQuestion: announce, wait for the answer from any replica, or end on stop. */
  private async askUser(
    state: TurnState,
    local: LocalTurn,
    toolUseId: string,
    input: Record<string, unknown>,
  ): Promise<{ output: string; isError: boolean }> {
    const questions = parseQuestions(input.questions);
    if (!questions) {
      return {
        output: 'questions must be an array of {question, header, options:[{label, description}], multiSelect}',
        isError: true,
      };
    }
    const id = `ask-${this.clock.now()}-${randomBytes(4).toString('hex').slice(0, 6)}`;
    await this.turns.setQuestion(state.turn.id, {
      id,
      questions,
      toolUseId,
      askedAt: new Date(this.clock.now()).toISOString(),
    });
    await state.emit(AgentChannels.askQuestion, { id, questions });
    try {
      for (;;) {
        if (state.signal.aborted) throw new TurnInterrupted(local.reason ?? 'stop');
        const turn = await this.turns.findById(state.turn.id);
        if (turn?.questionAnswer) {
          return { output: `The user answered: ${JSON.stringify(turn.questionAnswer)}`, isError: false };
        }
        if (turn?.stopRequested) throw new TurnInterrupted('stop');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, QUESTION_POLL_MS);
          local.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        local.wake = null;
      }
    } finally {
      local.wake = null;
      await this.turns.setQuestion(state.turn.id, null).catch(() => undefined);
    }
  }

  private async complete(state: TurnState): Promise<void> {
    const content = state.replyParts.join('\n\n');
    const tokenUsage = this.tokenUsage(state);
    await this.conversations.appendMessage(
      state.turn.conversationId,
      {
        role: 'assistant',
        content,
        meta: { turnId: state.turn.id, model: state.model, tokenUsage, contextTokens: state.lastContextTokens },
      },
      state.thoughts,
    );
    await state.emit(AgentChannels.message, { content, isComplete: true });
    await this.turns.finish(state.turn.id, 'completed');
    await state.emit(AgentChannels.complete, { duration: this.clock.now() - state.startedAt, tokenUsage });
    // Memory grows with the conversation; the space's cadence decides when to reorganize it.
    await this.memory.afterTurn(state.turn.spaceId);
  }

  /** Ends a turn that failed or was interrupted, keeping what it produced. */
  private async fail(
    turn: TurnRecord,
    emit: Emit,
    state: TurnState | null,
    thoughts: Thought[],
    replyParts: string[],
    startedAt: number,
    err: unknown,
    interrupted: AbortReason | null,
  ): Promise<void> {
    const error =
      interrupted === 'stop'
        ? TurnTexts.stopped
        : interrupted === 'shutdown'
          ? TurnTexts.shutdown
          : err instanceof StepLimitReached
            ? TurnTexts.stepLimit
            : err instanceof ModelCallError
              ? `Model call failed: ${err.message}`
              : `The turn failed: ${(err as Error)?.message ?? String(err)}`;
    if (!interrupted && !(err instanceof ModelCallError) && !(err instanceof StepLimitReached)) {
      this.logger.error(`turn ${turn.id} failed: ${(err as Error)?.stack ?? String(err)}`);
    }
    const content = replyParts.join('\n\n');
    const tokenUsage = state ? this.tokenUsage(state) : undefined;
    if (content !== '' || thoughts.length > 0) {
      await this.conversations.appendMessage(
        turn.conversationId,
        {
          role: 'assistant',
          content,
          meta: {
            turnId: turn.id,
            ...(interrupted ? { interrupted: true } : { error }),
            ...(tokenUsage ? { tokenUsage } : {}),
          },
        },
        thoughts,
      );
    }
    const leftover = await this.turns.takePendingInputs(turn.id).catch(() => [] as PendingInput[]);
    if (!(await this.turns.finish(turn.id, interrupted ? 'interrupted' : 'failed', error))) return;
    if (leftover.length > 0) await emit(AgentChannels.inputStopped, { messages: toWireMessages(leftover) });
    const errorPayload: Record<string, unknown> = { error };
    if (interrupted) errorPayload.errorType = 'interrupted';
    else if (err instanceof ModelCallError) errorPayload.errorCode = err.kind;
    await emit(AgentChannels.error, errorPayload);
    await emit(AgentChannels.complete, {
      duration: this.clock.now() - startedAt,
      ...(tokenUsage ? { tokenUsage } : {}),
    });
  }

  private async endWithError(
    turn: TurnRecord,
    emit: Emit,
    startedAt: number,
    error: string,
    extra: Record<string, unknown>,
  ): Promise<void> {
    if (!(await this.turns.finish(turn.id, 'failed', error))) return;
    await emit(AgentChannels.error, { error, ...extra });
    await emit(AgentChannels.complete, { duration: this.clock.now() - startedAt });
  }

  private tokenUsage(state: TurnState): TokenUsageDto {
    const pricing = state.info.pricing;
    const cost = pricing
      ? (state.usage.inputTokens * pricing.input +
          state.usage.outputTokens * pricing.output +
          state.usage.cacheReadTokens * (pricing.cacheRead ?? pricing.input) +
          state.usage.cacheCreationTokens * (pricing.cacheWrite ?? pricing.input)) /
        1_000_000
      : 0;
    return { ...state.usage, totalCostUsd: Math.round(cost * 1e6) / 1e6, contextWindow: state.info.contextWindow };
  }
}

class StepLimitReached extends Error {}

function lastContextTokens(messages: Array<{ role: string; meta: Record<string, unknown> }>): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'system' && m.meta.kind === COMPACTION_KIND) return 0;
    if (m.role === 'assistant' && typeof m.meta.contextTokens === 'number') return m.meta.contextTokens;
  }
  return 0;
}

function isPlainUserMessage(m: ModelMessage): boolean {
  return m.role === 'user' && !m.content.some((b) => b.type === 'tool_result');
}

function addUsage(total: TokenUsage, add: TokenUsage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens += add.cacheReadTokens;
  total.cacheCreationTokens += add.cacheCreationTokens;
}

export function toWireMessages(inputs: PendingInput[]): Array<{ id: string; role: 'user'; content: string }> {
  return inputs.map((i) => ({ id: i.messageId, role: 'user' as const, content: i.content }));
}

function parseQuestions(value: unknown): AskQuestion[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: AskQuestion[] = [];
  for (const q of value) {
    const item = q as Partial<AskQuestion>;
    if (typeof item?.question !== 'string') return null;
    out.push({
      question: item.question,
      header: typeof item.header === 'string' ? item.header : '',
      options: Array.isArray(item.options)
        ? item.options.map((o) => ({ label: String(o?.label ?? ''), description: String(o?.description ?? '') }))
        : [],
      multiSelect: item.multiSelect === true,
    });
  }
  return out;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
