import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AgentChannels, AgentInternalChannels, type TurnKind } from '#contracts/agent.js';
import type { ApprovalPolicy, TokenUsageDto } from '#contracts/agent.js';
import { approvalMatcher } from '../approvals/approval-policy.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { Clock } from '../ports/clock.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { Metrics, NoopMetrics } from '../ports/metrics.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { Replica } from '../ports/replica.port.js';
import { ACTIVE_TURN_STATUSES, type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import { ConversationEvents } from './conversation-events.js';
import { RecordRetry } from './record-retry.js';
import { AgentLoop, type TurnOutcome, TurnInterrupted } from './engine/agent-loop.js';
import type { Emit } from './engine/step-emitter.js';
import type { AbortReason, ApprovalChannel, QuestionChannel, TurnIO, TurnPlan } from './engine/turn-plan.js';
import { announceQueuedTurn } from './turn-announce.js';
import { endAnnounced, endUnfinishedTurn, toWireMessages } from './turn-endings.js';
import { isRefusal, type TurnRefusal } from './turn-plan-builder.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';

const HEARTBEAT_MS = 5_000;
/** How long a stop heard for a turn not running here is kept (see `stopsHeard`). */
const STOP_HEARD_MS = 60_000;
const QUESTION_POLL_MS = 1_000;
const NO_TOKENS: TokenUsageDto = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  totalCostUsd: 0,
  contextWindow: 0,
};

interface LocalTurn {
  abort: AbortController;
  reason: AbortReason | null;
  /** Wakes a turn waiting for an answer to its question. */
  wake: (() => void) | null;
}

/**
 * Runs assistant turns (the `agent.turn` job) through their lifecycle: claims the turn
 * record, keeps its heartbeat, builds the plan its kind calls for, lets the agent loop run
 * it, and records and announces the end. Stops and answers reach the replica running the
 * turn through internal bus events; the state clients recover from lives in the turn record.
 * The end is recorded marked unannounced, and the mark cleared once its events are out: the
 * reaper announces an end whose replica died in between.
 */
@Injectable()
export class TurnRunner implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('AgentTurns');
  private readonly local = new Map<string, LocalTurn>();
  private unsubscribe: (() => void) | null = null;
  /** The heartbeat of the turns in `local` (keepBeating). */
  private beating: ReturnType<typeof setInterval> | null = null;
  /**
   * Stops heard for turns not running here, by turn id (when heard). The stop of a turn this
   * replica has just claimed can be heard before the claim's answer (the bus and the database
   * answer on different connections): `run` looks here once it holds the turn.
   */
  private readonly stopsHeard = new Map<string, number>();

  constructor(
    private readonly turns: TurnRepository,
    private readonly builders: TurnPlanBuilders,
    private readonly loop: AgentLoop,
    private readonly events: ConversationEvents,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    /** Record writes kept through a database outage (the end of a turn is never lost to one). */
    private readonly record: RecordRetry = RecordRetry.never(),
    /** The process's one replica id: claimed turns carry it. */
    private readonly replica: Replica = Replica.alone(),
    /** Approval policies (absent in unit tests: no tool call is ever held). */
    private readonly approvals?: ApprovalsService,
    /** Turns counted by kind and outcome (docs/operations.md, "Metrics"). */
    private readonly metrics: Metrics = new NoopMetrics(),
    /** Where a follow-up turn's job goes (absent in unit tests). */
    private readonly queue?: JobQueue,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel === AgentInternalChannels.stop) {
        for (const id of (event.data.turnIds as string[] | undefined) ?? []) {
          if (this.local.has(id)) this.abortLocal(id, 'stop');
          else this.heardStop(id);
        }
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

  /**
   * The heartbeat of every turn this process runs, in one statement every HEARTBEAT_MS (a
   * statement per turn before: a worker with 64 runs waiting for a slot wrote 13 a second).
   * Stops when no turn is left; a claim set the first beat.
   */
  private keepBeating(): void {
    if (this.beating) return;
    this.beating = setInterval(() => {
      if (this.local.size === 0) {
        clearInterval(this.beating!);
        this.beating = null;
        return;
      }
      void this.turns.heartbeat([...this.local.keys()]).catch(() => undefined);
    }, HEARTBEAT_MS);
    this.beating.unref();
  }

  onApplicationShutdown(): void {
    if (this.beating) clearInterval(this.beating);
    this.beating = null;
    this.unsubscribe?.();
    for (const id of this.local.keys()) this.abortLocal(id, 'shutdown');
  }

  /** Whether this process runs the turn (its heartbeat may lag while the database is away). */
  isRunningHere(turnId: string): boolean {
    return this.local.has(turnId);
  }

  private heardStop(turnId: string): void {
    const now = this.clock.now();
    if (this.stopsHeard.size >= 1_000) {
      for (const [id, at] of this.stopsHeard) if (now - at > STOP_HEARD_MS) this.stopsHeard.delete(id);
    }
    this.stopsHeard.set(turnId, now);
  }

  private abortLocal(turnId: string, reason: AbortReason): void {
    const local = this.local.get(turnId);
    if (!local || local.abort.signal.aborted) return;
    local.reason = reason;
    local.abort.abort();
    local.wake?.();
  }

  /**
   * The `agent.turn` job. A turn that is no longer queued (stopped, or re-delivered) is left
   * alone. The record's kind decides the plan; `jobKind` (from the job) only has to agree.
   */
  async run(turnId: string, jobKind?: TurnKind): Promise<void> {
    // queued → running in one statement: a turn no longer queued (or asked to stop) is not claimed.
    const claimed = await this.turns.claim(turnId, this.replica.id);
    if (!claimed) return;
    if (jobKind && jobKind !== claimed.kind) {
      this.logger.warn(
        `turn ${turnId} was queued as ${jobKind} but is recorded as ${claimed.kind}; running it as recorded`,
      );
    }
    const turn = { ...claimed, status: 'running' as const };
    const local: LocalTurn = { abort: new AbortController(), reason: null, wake: null };
    this.local.set(turnId, local);
    if (this.stopsHeard.delete(turnId)) this.abortLocal(turnId, 'stop');
    this.keepBeating();
    const startedAt = this.clock.now();
    const io = this.ioOf(turn, local);
    let plan: TurnPlan | null = null;
    let skipped: TurnRefusal | null = null;
    let outcome: TurnOutcome;
    let outage = false;
    try {
      try {
        // A stop heard since the claim (or just before its answer: `stopsHeard`).
        if (local.abort.signal.aborted) throw new TurnInterrupted(local.reason ?? 'stop');
        const built = await this.builders.for(turn.kind).build(turn, io);
        if (isRefusal(built) && built.quiet) {
          skipped = built;
          outcome = { status: 'completed', tokenUsage: NO_TOKENS };
        } else if (isRefusal(built)) {
          outcome = { status: 'failed', interrupted: null, error: built.error, errorFields: built.details };
        } else {
          plan = built;
          await this.holdApprovals(turn, local, plan);
          outcome = await this.loop.run(plan);
        }
      } catch (err) {
        // The plan could not be built, or its hooks failed: nothing more to keep than the end.
        outcome = this.loop.failureOf(err, io);
        outage = outcome.status === 'failed' && this.record.isOutage(err);
      }
      if (outcome.status === 'failed')
        this.logger.warn('turn failed', { turnId, kind: turn.kind, error: outcome.error });
      this.metrics.turnFinished(turn.kind, outcome.status);
      if (skipped) await this.finishQuietly(turn, io.emit, startedAt, skipped.error);
      else await this.finish(turn, io.emit, startedAt, outcome);
    } catch (err) {
      this.logger.error(`turn ${turnId} could not record its end: ${(err as Error).message}`);
      return;
    } finally {
      this.local.delete(turnId);
    }
    if (skipped) {
      await skipped.quiet
        ?.afterEnded?.()
        .catch((err: Error) => this.logger.warn(`the work after turn ${turnId} failed: ${err.message}`));
      return;
    }
    if (plan === null && outcome.status !== 'completed') {
      await this.builders.endedWithoutPlan(turn, {
        status: outcome.status,
        error: outcome.error,
        ...(outage ? { outage: true } : {}),
      });
    }
    if (outcome.status === 'completed') {
      await plan?.hooks
        .afterCompleted?.()
        .catch((err: Error) => this.logger.warn(`the work after turn ${turnId} failed: ${err.message}`));
    }
    await plan?.hooks
      .afterEnded?.()
      .catch((err: Error) => this.logger.warn(`the work after turn ${turnId} failed: ${err.message}`));
  }

  /**
   * A turn that had nothing to do: recorded as completed, with no `agent:error`; its
   * `agent:complete` closes the `agent:turn-start` it was announced with. Input that reached it
   * meanwhile is handed back like a stopped turn's (`agent:input-stopped`), never dropped.
   */
  private async finishQuietly(turn: TurnRecord, emit: Emit, startedAt: number, reason: string): Promise<void> {
    const kept = this.record.keeping(this.turns, `turn ${turn.id}`, 'finish', 'takePendingInputs');
    const leftover = await kept.takePendingInputs(turn.id).catch(() => []);
    const ended = await kept.finish(turn.id, 'completed');
    if (leftover.length > 0) await emit(AgentChannels.inputStopped, { messages: toWireMessages(leftover) });
    await emit(AgentChannels.complete, { duration: this.clock.now() - startedAt });
    if (ended) await endAnnounced(this.turns, turn.id);
    this.logger.debug(`turn ${turn.id} ended with nothing to do: ${reason}`);
  }

  private async finish(turn: TurnRecord, emit: Emit, startedAt: number, outcome: TurnOutcome): Promise<void> {
    const durationMs = this.clock.now() - startedAt;
    if (outcome.status === 'completed') {
      const ended = await this.record
        .keeping(this.turns, `turn ${turn.id}`, 'complete')
        .complete(turn.id, randomUUID());
      await emit(AgentChannels.complete, { duration: durationMs, tokenUsage: outcome.tokenUsage });
      if (ended) await endAnnounced(this.turns, turn.id);
      // Input that came after the turn's last step read it is answered by a turn of its own.
      if (ended?.followUp) await this.announceFollowUp(ended.followUp, ended.lateInputs);
      return;
    }
    await endUnfinishedTurn(
      {
        ...this.record.keeping(this.turns, `turn ${turn.id}`, 'finish', 'takePendingInputs'),
        endAnnounced: (id) => this.turns.endAnnounced(id),
      },
      turn.id,
      emit,
      {
        status: outcome.status,
        error: outcome.error,
        errorFields: outcome.errorFields,
        durationMs,
        tokenUsage: outcome.tokenUsage,
      },
    );
  }

  private async announceFollowUp(followUp: TurnRecord, lateInputs: number): Promise<void> {
    this.logger.debug(`turn ${followUp.id} follows up ${lateInputs} message(s) that came after the last step`);
    // Without a queue (unit tests) the reaper's sweep for orphaned queued turns adds its job.
    if (!this.queue) return;
    await announceQueuedTurn(this.events, this.queue, followUp).catch((err: Error) =>
      this.logger.warn(`turn ${followUp.id}: announcing it failed (${err.message}); the reaper queues it again`),
    );
  }

  /**
   * The approval policy the plan's tool calls run under (read once the plan is built, with the
   * digital human the plan read), as the plan's `io.approvals`; none when no policy holds anything.
   */
  private async holdApprovals(turn: TurnRecord, local: LocalTurn, plan: TurnPlan): Promise<void> {
    const approvals = this.approvals;
    if (!approvals) return;
    const policy = await approvals.policyForTurn(turn, plan.app).catch((err: Error) => {
      this.logger.warn(`turn ${turn.id}: reading the approval policy failed: ${err.message}`);
      return null;
    });
    if (policy) plan.io.approvals = this.approvalsOf(turn, local, policy, approvals);
  }

  /** The turn's lines to the world: its conversation's events, its record, its stop signal. */
  private ioOf(turn: TurnRecord, local: LocalTurn): TurnIO {
    const kept = this.record.keeping(this.turns, `turn ${turn.id}`, 'takePendingInputs', 'saveThoughts');
    let inHistory: ReadonlySet<string> = new Set();
    return {
      label: `turn ${turn.id}`,
      emit: this.events.emitterFor(turn.spaceId, turn.conversationId),
      fire: (channel, payload) => this.events.fire(turn.spaceId, turn.conversationId, channel, payload),
      signal: local.abort.signal,
      abortReason: () => local.reason ?? 'stop',
      takePendingInput: async () =>
        (await kept.takePendingInputs(turn.id)).filter((i) => !inHistory.has(i.messageId)).map((i) => i.content),
      historyHolds: (messageIds) => {
        inHistory = new Set(messageIds);
      },
      saveRetry: (retry) => this.turns.setRetry(turn.id, retry as Record<string, unknown> | null),
      saveThoughts: (thoughts) => kept.saveThoughts(turn.id, thoughts),
      questions: this.questionsOf(turn.id, local),
    };
  }

  /**
   * Held tool calls wait in the turn record like questions: the answer may come to any replica
   * (which wakes this one over the bus); the deadline and a stop reject the call.
   */
  private approvalsOf(
    turn: TurnRecord,
    local: LocalTurn,
    policy: ApprovalPolicy,
    approvals: ApprovalsService,
  ): ApprovalChannel {
    const holds = approvalMatcher(policy);
    return {
      holds,
      timeoutSeconds: policy.timeoutSeconds,
      post: async (pending) => {
        await this.turns.setApproval(turn.id, pending);
        await approvals.held(turn, pending);
      },
      waitForDecision: async (pending) => {
        const deadline = Date.parse(pending.deadline);
        try {
          for (;;) {
            if (local.abort.signal.aborted) return 'stopped';
            const record = await this.turns.findById(turn.id);
            if (record?.approvalDecision) return record.approvalDecision;
            // Stopped, or ended meanwhile by another replica (the reaper): nobody can answer any more.
            if (!record || record.stopRequested || !ACTIVE_TURN_STATUSES.includes(record.status)) return 'stopped';
            const left = deadline - this.clock.now();
            if (left <= 0) {
              // The deadline's rejection is recorded like an answer, so one that came just now is not lost.
              const expired = await this.turns.decideApproval(turn.conversationId, pending.toolId, {
                approved: false,
                by: 'server',
                at: new Date(this.clock.now()).toISOString(),
              });
              if (expired) return 'timeout';
              continue;
            }
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, Math.min(QUESTION_POLL_MS, left));
              local.wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            local.wake = null;
          }
        } finally {
          local.wake = null;
        }
      },
      settle: async (pending, record) => {
        await this.turns.setApproval(turn.id, null);
        await approvals.decided(turn, pending, record);
      },
    };
  }

  /** Questions wait in the turn record, so any replica can take the answer; a stop cancels them. */
  private questionsOf(turnId: string, local: LocalTurn): QuestionChannel {
    return {
      post: (question) => this.turns.setQuestion(turnId, question),
      waitForAnswer: async () => {
        try {
          for (;;) {
            if (local.abort.signal.aborted) throw new TurnInterrupted(local.reason ?? 'stop');
            const turn = await this.turns.findById(turnId);
            if (turn?.questionAnswer) return turn.questionAnswer;
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
        }
      },
      clear: () => this.turns.setQuestion(turnId, null),
    };
  }
}
