import { randomUUID } from 'node:crypto';
import { AgentChannels } from '#contracts/agent.js';
import { Injectable, Logger } from '@nestjs/common';
import { turnJobId } from '../kernel/job-ids.js';
import { Clock } from '../ports/clock.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import { SpaceActivity } from '../ports/space-activity.port.js';
import { ConversationEvents } from './conversation-events.js';
import { announceQueuedTurn } from './turn-announce.js';
import { endAnnounced, endUnfinishedTurn, errorEventOf, TurnTexts } from './turn-endings.js';
import type { LostTurnOutcome } from './turn-plan-builder.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';
import { TurnRunner } from './turn-runner.js';

/** A running turn whose replica has not refreshed its heartbeat for this long is lost. */
export const STALE_TURN_MS = 15_000;
export const REAP_EVERY_MS = 5_000;

/**
 * The `agent.reap` job: turns whose replica died (SIGKILL, crash, lost node) are marked
 * interrupted and announced, so `generating` is false everywhere and clients see the end.
 * Ends recorded but never announced (the replica died between the two) are announced too.
 */
@Injectable()
export class TurnReaper {
  private readonly logger = new Logger('AgentTurns');

  constructor(
    private readonly turns: TurnRepository,
    private readonly events: ConversationEvents,
    private readonly clock: Clock,
    private readonly runner?: TurnRunner,
    private readonly builders?: TurnPlanBuilders,
    private readonly queue?: JobQueue,
  ) {}

  async reap(): Promise<number> {
    const stale = await this.turns.findStale(new Date(this.clock.now() - STALE_TURN_MS));
    let reaped = 0;
    for (const turn of stale) {
      // Ours and alive: its heartbeat lagged because the database was away, and it is recording its end.
      if (this.runner?.isRunningHere(turn.id)) continue;
      const outcome = await this.outcomeOf(turn);
      if (outcome === 'completed') {
        if (await this.completeLost(turn)) reaped++;
        continue;
      }
      // What the dead replica streamed is only in the event log now: read it before the end is announced.
      const partialReply = await this.events.streamedReply(turn.conversationId).catch(() => '');
      const ended = await endUnfinishedTurn(
        this.turns,
        turn.id,
        this.events.emitterFor(turn.spaceId, turn.conversationId),
        {
          status: 'interrupted',
          error: TurnTexts.replicaLost,
          errorFields: { errorType: 'interrupted' },
          durationMs: this.clock.now() - (turn.startedAt ?? turn.createdAt).getTime(),
        },
      );
      if (!ended) continue;
      reaped++;
      const rerun = outcome === 'rerun' && (await this.rerun(turn));
      await this.builders?.endedWithoutPlan(turn, {
        status: 'interrupted',
        error: TurnTexts.replicaLost,
        partialReply,
        rerun,
      });
      this.logger.warn(
        `turn ${turn.id} of conversation ${turn.conversationId} lost its replica ${turn.replicaId}; marked interrupted` +
          (rerun ? ' and queued again' : ''),
      );
    }
    await this.announceEnds();
    await this.requeueOrphans();
    return reaped;
  }

  /**
   * Turns whose end was recorded STALE_TURN_MS ago and is still not announced: the replica
   * that recorded it died (or is stuck) before publishing `agent:error`/`agent:complete`, and
   * the event log, in Redis, cannot share the database's transaction. Their end is published
   * here as their runner would have (less what the record does not keep: token usage, an
   * error's code, input handed back), then the mark is cleared. When the runner did publish
   * and only died before clearing the mark, clients get the end twice: rare, and better than
   * an end never seen.
   */
  private async announceEnds(): Promise<void> {
    const pending = await this.turns.findUnannounced(new Date(this.clock.now() - STALE_TURN_MS));
    for (const turn of pending) {
      // Ours and alive: it is still publishing (the event log may be slow or away).
      if (this.runner?.isRunningHere(turn.id)) continue;
      const emit = this.events.emitterFor(turn.spaceId, turn.conversationId);
      const endedAt = (turn.endedAt ?? new Date(this.clock.now())).getTime();
      try {
        if (turn.status !== 'completed') await emit(AgentChannels.error, errorEventOf(turn));
        await emit(AgentChannels.complete, { duration: endedAt - (turn.startedAt ?? turn.createdAt).getTime() });
      } catch (err) {
        this.logger.warn(`turn ${turn.id}: announcing its end failed (${(err as Error).message}); retried next sweep`);
        continue;
      }
      await endAnnounced(this.turns, turn.id);
      this.logger.warn(
        `turn ${turn.id} of conversation ${turn.conversationId} ended (${turn.status}) without its end announced; announced it`,
      );
    }
  }

  /** What its kind makes of a lost turn; a turn that was itself a rerun is not run a third time. */
  private async outcomeOf(turn: TurnRecord): Promise<LostTurnOutcome> {
    const outcome = (await this.builders?.whenLost(turn).catch(() => 'interrupt' as const)) ?? 'interrupt';
    if (outcome === 'rerun' && (!this.queue || typeof turn.request.rerunOf === 'string')) return 'interrupt';
    return outcome;
  }

  /**
   * A lost turn whose whole reply was recorded ends as its runner would have ended it:
   * completed, its `agent:complete` announced, input that came after its last step answered by
   * a follow-up turn (`complete` creates it in the same transaction), and its kind delivers the
   * reply (the dead replica may or may not have). False when someone else ended it first.
   */
  private async completeLost(turn: TurnRecord): Promise<boolean> {
    const ended = await this.turns.complete(turn.id, randomUUID());
    if (!ended) return false;
    const emit = this.events.emitterFor(turn.spaceId, turn.conversationId);
    await emit(AgentChannels.complete, {
      duration: this.clock.now() - (turn.startedAt ?? turn.createdAt).getTime(),
    });
    await endAnnounced(this.turns, turn.id);
    if (ended.followUp && this.queue) {
      await announceQueuedTurn(this.events, this.queue, ended.followUp).catch((err: Error) =>
        this.logger.warn(
          `turn ${ended.followUp?.id}: announcing it failed (${err.message}); queued again on the next sweep`,
        ),
      );
    }
    await this.builders?.completedWhenLost(turn);
    this.logger.warn(
      `turn ${turn.id} of conversation ${turn.conversationId} lost its replica ${turn.replicaId} after recording its reply; ` +
        `marked completed` +
        (ended.followUp ? ` and ${ended.lateInputs} later message(s) queued for turn ${ended.followUp.id}` : ''),
    );
    return true;
  }

  /**
   * Queues a lost turn again (its kind answered `rerun`), once: the new turn carries `rerunOf`
   * and is not run a third time. True when the input will be answered: by the new turn, or by a
   * turn a later message already started (its history holds the input too).
   */
  private async rerun(turn: TurnRecord): Promise<boolean> {
    if (!this.queue) return false;
    try {
      const again = await this.turns.createQueued({
        id: randomUUID(),
        kind: turn.kind,
        conversationId: turn.conversationId,
        spaceId: turn.spaceId,
        request: { ...turn.request, rerunOf: turn.id },
      });
      if (again) await announceQueuedTurn(this.events, this.queue, again);
      return true;
    } catch (err) {
      this.logger.warn(`turn ${turn.id}: running it again failed: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * A turn is recorded as queued before its job is added: a replica that died between the two
   * left a turn no worker will ever take, and every later message of its conversation merged
   * into it, unanswered. Its job is added again (the same id: a no-op while the job exists).
   */
  private async requeueOrphans(): Promise<void> {
    if (!this.queue) return;
    const before = this.clock.now() - STALE_TURN_MS;
    for (const turn of await this.turns.listActive()) {
      if (turn.status !== 'queued' || turn.createdAt.getTime() > before) continue;
      await this.queue
        .add('agent.turn', { turnId: turn.id, kind: turn.kind }, { jobId: turnJobId(turn.id) })
        .catch((err: Error) => this.logger.warn(`turn ${turn.id}: queueing it again failed: ${err.message}`));
    }
  }
}

/** Work is in progress in a space while one of its conversations has an active turn. */
export class TurnSpaceActivity extends SpaceActivity {
  constructor(private readonly turns: TurnRepository) {
    super();
  }

  async isBusy(spaceId: string): Promise<boolean> {
    return (await this.turns.listActive()).some((t) => t.spaceId === spaceId);
  }
}
