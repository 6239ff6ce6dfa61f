import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  AgentChannels,
  type ApiRetryInfo,
  type ApprovalRecord,
  type AskQuestion,
  type Thought,
  type TokenUsageDto,
} from '#contracts/agent.js';
import type { AgentSettings } from '../../config/app-config.js';
import type { Clock } from '../../ports/clock.port.js';
import {
  ModelCallError,
  type ModelContentBlock,
  type ModelMessage,
  type ModelProvider,
  type StopReason,
  type TokenUsage,
} from '../../ports/model-provider.port.js';
import { TurnTexts } from '../turn-endings.js';
import { ToolInputError, type ToolOutcome } from '../../kernel/tool.js';
import { RejectionReasons, rejectionText } from '../../approvals/approval-policy.js';
import { COMPACTION_THRESHOLD, compactedHistory, compactionSplit, estimateTokens, transcriptOf } from './compaction.js';
import { StepEmitter } from './step-emitter.js';
import type { AbortReason, TurnIO, TurnPlan } from './turn-plan.js';

export type LoopLimits = Pick<AgentSettings, 'maxSteps' | 'maxRetries' | 'retryBaseMs' | 'maxOutputTokens'>;

/** A stop or a shutdown ended the turn. */
export class TurnInterrupted extends Error {
  constructor(readonly reason: AbortReason) {
    super(reason === 'stop' ? TurnTexts.stopped : TurnTexts.shutdown);
  }
}

export class StepLimitReached extends Error {}

/** How a turn ended, for the lifecycle to record and announce. */
export type TurnOutcome = { status: 'completed'; tokenUsage: TokenUsageDto } | TurnEndedEarly;

/** A turn that failed or was interrupted. */
export interface TurnEndedEarly {
  status: 'failed' | 'interrupted';
  interrupted: AbortReason | null;
  /** The text of `agent:error`. */
  error: string;
  /** `errorCode` or `errorType` of the `agent:error` payload. */
  errorFields: Record<string, unknown>;
  tokenUsage?: TokenUsageDto;
}

/** The turn's working state, private to one run of the loop. */
interface LoopState {
  plan: TurnPlan;
  io: TurnIO;
  history: ModelMessage[];
  thoughts: Thought[];
  replyParts: string[];
  usage: TokenUsage;
  contextTokens: number;
}

/**
 * The model ↔ tools loop: streams the model, runs the tools it calls, feeds the results
 * back and repeats until the model ends; retries failed calls, compacts a long history,
 * hands input that arrived meanwhile to the next step, waits for answers to questions and
 * stops when asked. Every step goes out through the plan's emitter; what the turn produced
 * goes to the plan's hooks. It knows no conversation, memory or app: the plan does.
 */
export class AgentLoop {
  private readonly logger = new Logger('AgentTurns');

  constructor(
    private readonly provider: ModelProvider,
    private readonly clock: Clock,
    private readonly limits: LoopLimits,
  ) {}

  /** Runs the plan to its end and reports it to the plan's hooks; throws only when a hook does. */
  async run(plan: TurnPlan): Promise<TurnOutcome> {
    const state: LoopState = {
      plan,
      io: plan.io,
      history: [...plan.history],
      thoughts: [],
      replyParts: [],
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
      contextTokens: plan.contextTokens,
    };
    try {
      await this.steps(state);
      const reply = state.replyParts.join('\n\n');
      const tokenUsage = this.tokenUsage(state);
      await plan.hooks.onComplete({
        reply,
        thoughts: state.thoughts,
        tokenUsage,
        model: plan.model.model,
        contextTokens: state.contextTokens,
      });
      await plan.io.emit(AgentChannels.message, { content: reply, isComplete: true });
      return { status: 'completed', tokenUsage };
    } catch (err) {
      const tokenUsage = this.tokenUsage(state);
      const ended = { ...this.failureOf(err, plan.io), tokenUsage };
      await plan.hooks.onFailure({
        error: ended.error,
        interrupted: ended.interrupted,
        reply: state.replyParts.join('\n\n'),
        thoughts: state.thoughts,
        tokenUsage,
      });
      return ended;
    }
  }

  /** Why a turn ended early, as `agent:error` tells it; unexpected errors are logged. */
  failureOf(err: unknown, io: Pick<TurnIO, 'label' | 'signal' | 'abortReason'>): TurnEndedEarly {
    if (err instanceof TurnInterrupted || io.signal.aborted) {
      const reason = err instanceof TurnInterrupted ? err.reason : io.abortReason();
      return {
        status: 'interrupted',
        interrupted: reason,
        error: reason === 'stop' ? TurnTexts.stopped : TurnTexts.shutdown,
        errorFields: { errorType: 'interrupted' },
      };
    }
    const failed = (error: string, errorFields: Record<string, unknown> = {}): TurnEndedEarly => ({
      status: 'failed',
      interrupted: null,
      error,
      errorFields,
    });
    if (err instanceof StepLimitReached) return failed(TurnTexts.stepLimit);
    if (err instanceof ModelCallError) return failed(`Model call failed: ${err.message}`, { errorCode: err.kind });
    this.logger.error(`${io.label} failed: ${(err as Error)?.stack ?? String(err)}`);
    return failed(`The turn failed: ${(err as Error)?.message ?? String(err)}`);
  }

  private async steps(state: LoopState): Promise<void> {
    const { io } = state;
    const maxSteps = state.plan.maxSteps ?? this.limits.maxSteps;
    for (let step = 1; ; step++) {
      if (io.signal.aborted) throw new TurnInterrupted(io.abortReason());
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
      // Images a tool returned (a browser screenshot) follow every result, as the providers want them.
      const images: ModelContentBlock[] = [];
      for (const call of calls) {
        if (io.signal.aborted) throw new TurnInterrupted(io.abortReason());
        if (io.approvals?.holds(call.name)) {
          const approval = await this.holdForApproval(state, call);
          if (approval.outcome !== 'approved') {
            const refusal = rejectionText(approval.reason ?? RejectionReasons.none);
            await response.emitter.toolResult(call.id, refusal, true);
            if (approval.outcome === 'stopped') throw new TurnInterrupted(io.abortReason());
            results.push({ type: 'tool_result', toolUseId: call.id, content: refusal, isError: true });
            continue;
          }
          // Approved: announced again, without the flag, as it starts.
          await io.emit(AgentChannels.toolCall, { id: call.id, name: call.name, status: 'running', input: call.input });
        }
        const outcome = await this.runTool(state, call.id, call.name, call.input);
        await response.emitter.toolResult(call.id, outcome.output, outcome.isError);
        results.push({ type: 'tool_result', toolUseId: call.id, content: outcome.output, isError: outcome.isError });
        for (const image of outcome.images ?? []) images.push({ type: 'image', ...image });
      }
      state.history.push({ role: 'user', content: [...results, ...images] });
      await io.saveThoughts(state.thoughts);
      if (step >= maxSteps) throw new StepLimitReached();
    }
  }

  /** Input recorded while generating joins the conversation at the next step. */
  private async absorbInput(state: LoopState): Promise<void> {
    const inputs = await state.io.takePendingInput();
    if (inputs.length === 0) return;
    const text = inputs.join('\n\n');
    const last = state.history[state.history.length - 1];
    if (last?.role === 'user') last.content.push({ type: 'text', text });
    else state.history.push({ role: 'user', content: [{ type: 'text', text }] });
  }

  private async compactIfNeeded(state: LoopState): Promise<void> {
    const { plan } = state;
    const preTokens = Math.max(state.contextTokens, estimateTokens(state.history, plan.system));
    if (preTokens < plan.model.info.contextWindow * COMPACTION_THRESHOLD || state.history.length < 3) return;
    const keepFrom = compactionSplit(state.history);
    const older = state.history.slice(0, keepFrom);
    if (older.length === 0) return;
    const summary = await this.summarize(state, older);
    if (summary === null) return;
    state.history = compactedHistory(summary, state.history.slice(keepFrom));
    state.contextTokens = 0;
    await plan.hooks.onCompacted?.({ summary, preTokens });
    await state.io.emit(AgentChannels.compact, { trigger: 'auto', preTokens });
  }

  private async summarize(state: LoopState, older: ModelMessage[]): Promise<string | null> {
    const { endpoint, model } = state.plan.model;
    let text = '';
    try {
      for await (const event of this.provider.stream(endpoint, {
        model,
        system: 'You compress conversations. Write a faithful summary that lets the assistant continue the work.',
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'text',
                text: `Summarize this conversation between a user and an assistant working in a workspace. Keep decisions, facts, file paths, open tasks and the user's requests.\n\n${transcriptOf(older)}`,
              },
            ],
          },
        ],
        tools: [],
        maxOutputTokens: 4096,
        reasoningEffort: 'off',
        signal: state.io.signal,
      })) {
        if (event.type === 'text_delta') text += event.delta;
        if (event.type === 'usage') addUsage(state.usage, event.usage);
      }
    } catch (err) {
      if (state.io.signal.aborted) throw err;
      this.logger.warn(`compaction failed in ${state.io.label}: ${(err as Error).message}`);
      return null;
    }
    return text.trim() === '' ? null : text.trim();
  }

  /** One model response, with retries of 429/5xx/network failures that happen before anything streamed. */
  private async callModel(
    state: LoopState,
  ): Promise<{ emitter: StepEmitter; blocks: ModelContentBlock[]; stopReason: StopReason }> {
    const { plan, io } = state;
    const { maxRetries, retryBaseMs, maxOutputTokens } = this.limits;
    let retried = false;
    for (let attempt = 0; ; attempt++) {
      const emitter = new StepEmitter(
        io.emit,
        state.thoughts,
        () => new Date(this.clock.now()),
        io.fire,
        io.approvals ? (name) => io.approvals!.holds(name) : undefined,
      );
      let stopReason: StopReason = 'other';
      try {
        for await (const event of this.provider.stream(plan.model.endpoint, {
          model: plan.model.model,
          system: plan.system,
          messages: state.history,
          tools: plan.tools.specs(),
          maxOutputTokens: Math.min(maxOutputTokens, plan.model.info.maxOutputTokens),
          reasoningEffort: plan.model.effort,
          signal: io.signal,
        })) {
          if (event.type === 'usage') {
            addUsage(state.usage, event.usage);
            state.contextTokens =
              event.usage.inputTokens +
              event.usage.cacheReadTokens +
              event.usage.cacheCreationTokens +
              event.usage.outputTokens;
          } else if (event.type === 'end') {
            stopReason = event.stopReason;
          }
          const handled = emitter.handle(event);
          if (handled) await handled;
        }
        if (retried) await this.announceRetry(io, null);
        state.replyParts.push(...emitter.textBlocks);
        return { emitter, blocks: emitter.blocks, stopReason };
      } catch (err) {
        if (io.signal.aborted) {
          state.replyParts.push(...emitter.partialTextBlocks());
          throw err;
        }
        const failure = err instanceof ModelCallError ? err : null;
        if (failure?.retryable && !emitter.streamedAnything && attempt < maxRetries) {
          const delayMs = failure.retryAfterMs ?? Math.min(30_000, retryBaseMs * 2 ** attempt);
          retried = true;
          this.logger.log('model call failed; retrying', {
            turn: io.label,
            attempt: attempt + 1,
            maxRetries,
            status: failure.status,
            kind: failure.kind,
            delayMs,
          });
          await this.announceRetry(io, {
            attempt: attempt + 1,
            maxRetries,
            delayMs,
            errorStatus: failure.status,
            errorKind: failure.kind,
            errorMessage: failure.message.slice(0, 500),
          });
          await sleep(delayMs, io.signal);
          continue;
        }
        state.replyParts.push(...emitter.partialTextBlocks());
        if (retried) await this.announceRetry(io, null);
        throw err;
      }
    }
  }

  private async announceRetry(io: TurnIO, retry: ApiRetryInfo | null): Promise<void> {
    await io.saveRetry(retry);
    await io.emit(AgentChannels.apiRetry, { retry });
  }

  private async runTool(
    state: LoopState,
    toolUseId: string,
    name: string,
    input: Record<string, unknown>,
  ): Promise<ToolOutcome> {
    const { io } = state;
    const tool = state.plan.tools.get(name);
    if (!tool) return { output: `Unknown tool: ${name}`, isError: true };
    try {
      return await tool.run(input, {
        space: state.plan.workspace,
        signal: io.signal,
        toolUseId,
        askUser: io.questions ? (questions) => this.askUser(io, toolUseId, questions) : undefined,
      });
    } catch (err) {
      if (io.signal.aborted || err instanceof TurnInterrupted) throw err;
      if (err instanceof ToolInputError) return { output: err.message, isError: true };
      const message = (err as Error).message ?? String(err);
      this.logger.warn(`tool ${name} failed in ${io.label}: ${message}`);
      return { output: `Tool failed: ${message}`, isError: true };
    }
  }

  /**
   * A call an approval policy holds: recorded where any replica can answer it, announced to
   * every client (`agent:tool-call` with `requiresApproval`), then waited on until an answer,
   * the deadline or a stop. The decision is kept on the call's thought (the audit).
   */
  private async holdForApproval(
    state: LoopState,
    call: { id: string; name: string; input: Record<string, unknown> },
  ): Promise<ApprovalRecord> {
    const { io } = state;
    const channel = io.approvals!;
    const now = this.clock.now();
    const pending = {
      toolId: call.id,
      name: call.name,
      input: call.input,
      requestedAt: new Date(now).toISOString(),
      deadline: new Date(now + channel.timeoutSeconds * 1000).toISOString(),
    };
    const record: ApprovalRecord = { requestedAt: pending.requestedAt, deadline: pending.deadline };
    const thought = state.thoughts.find((t) => t.toolUseId === call.id);
    if (thought) thought.approval = record;
    await channel.post(pending);
    await io.saveThoughts(state.thoughts);
    await io.emit(AgentChannels.toolCall, {
      id: call.id,
      name: call.name,
      status: 'running',
      input: call.input,
      requiresApproval: true,
      deadline: pending.deadline,
    });
    const answer = await channel.waitForDecision(pending);
    const decidedAt = new Date(this.clock.now()).toISOString();
    if (answer === 'timeout') {
      Object.assign(record, {
        outcome: 'timeout',
        decidedBy: 'server',
        reason: RejectionReasons.timeout(channel.timeoutSeconds),
      });
    } else if (answer === 'stopped') {
      Object.assign(record, { outcome: 'stopped', decidedBy: 'server', reason: RejectionReasons.stopped });
    } else {
      Object.assign(record, {
        outcome: answer.approved ? 'approved' : 'rejected',
        decidedBy: answer.by,
        ...(answer.channelUser ? { channelUser: answer.channelUser } : {}),
        ...(answer.approved ? {} : { reason: answer.reason ?? RejectionReasons.none }),
      });
    }
    record.decidedAt = answer === 'timeout' || answer === 'stopped' ? decidedAt : answer.at;
    await channel
      .settle(pending, record)
      .catch((err: Error) => this.logger.warn(`recording the approval decision in ${io.label} failed: ${err.message}`));
    return record;
  }

  /** The askUser capability of tools: announce the question, then wait for the answer or a stop. */
  private async askUser(io: TurnIO, toolUseId: string, questions: AskQuestion[]): Promise<Record<string, unknown>> {
    const channel = io.questions!;
    const id = `ask-${this.clock.now()}-${randomBytes(4).toString('hex').slice(0, 6)}`;
    await channel.post({ id, questions, toolUseId, askedAt: new Date(this.clock.now()).toISOString() });
    await io.emit(AgentChannels.askQuestion, { id, questions });
    try {
      return await channel.waitForAnswer(id);
    } finally {
      await channel.clear().catch(() => undefined);
    }
  }

  private tokenUsage(state: LoopState): TokenUsageDto {
    const { info } = state.plan.model;
    const pricing = info.pricing;
    const cost = pricing
      ? (state.usage.inputTokens * pricing.input +
          state.usage.outputTokens * pricing.output +
          state.usage.cacheReadTokens * (pricing.cacheRead ?? pricing.input) +
          state.usage.cacheCreationTokens * (pricing.cacheWrite ?? pricing.input)) /
        1_000_000
      : 0;
    return { ...state.usage, totalCostUsd: Math.round(cost * 1e6) / 1e6, contextWindow: info.contextWindow };
  }
}

function addUsage(total: TokenUsage, add: TokenUsage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens += add.cacheReadTokens;
  total.cacheCreationTokens += add.cacheCreationTokens;
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
