import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { turnJobId } from '../kernel/job-ids.js';
import { Clock } from '../ports/clock.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import { SpaceActivity } from '../ports/space-activity.port.js';
import { ConversationEvents } from './conversation-events.js';
import { announceQueuedTurn } from './turn-announce.js';
import { endUnfinishedTurn, TurnTexts } from './turn-endings.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';
import { TurnRunner } from './turn-runner.js';

/** A running turn whose replica has not refreshed its heartbeat for this long is lost. */
export const STALE_TURN_MS = 15_000;
export const REAP_EVERY_MS = 5_000;

/**
 * The `agent.reap` job: turns whose replica died (SIGKILL, crash, lost node) are marked
 * interrupted and announced, so `generating` is false everywhere and clients see the end.
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
      const rerun = await this.rerun(turn);
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
    await this.requeueOrphans();
    return reaped;
  }

  /**
   * Queues a lost turn again when its kind asks for that (`rerunWhenLost`), once: the new turn
   * carries `rerunOf` and is not run a third time. True when the input will be answered: by the
   * new turn, or by a turn a later message already started (its history holds the input too).
   */
  private async rerun(turn: TurnRecord): Promise<boolean> {
    if (!this.queue || !this.builders || typeof turn.request.rerunOf === 'string') return false;
    if (!(await this.builders.rerunWhenLost(turn))) return false;
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
