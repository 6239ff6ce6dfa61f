import type { TurnKind } from '#contracts/agent.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { TurnIO, TurnPlan } from './engine/turn-plan.js';

/** A turn that cannot run at all (nothing was produced): it ends as failed with this error. */
export interface TurnRefusal {
  refused: true;
  /** The text of `agent:error`. */
  error: string;
  /** More fields of the `agent:error` payload (errorCode, errorType, …). */
  details: Record<string, unknown>;
  /**
   * Set by `skipTurn`: nothing is wrong, there is just nothing to do. The turn ends `completed`
   * with no `agent:error` (its `agent:complete` closes the announced turn), then `afterEnded` runs.
   */
  quiet?: { afterEnded?: () => Promise<void> };
}

export function refuseTurn(error: string, details: Record<string, unknown> = {}): TurnRefusal {
  return { refused: true, error, details };
}

/**
 * A turn with nothing to do (e.g. a member turn queued for mail that an earlier turn took):
 * it ends quietly, recorded as completed, and `afterEnded` runs once the record says so.
 */
export function skipTurn(reason: string, afterEnded?: () => Promise<void>): TurnRefusal {
  return { refused: true, error: reason, details: {}, quiet: afterEnded ? { afterEnded } : {} };
}

export function isRefusal<T extends object>(built: T | TurnRefusal): built is TurnRefusal {
  return 'refused' in built;
}

/**
 * Builds the plan of one kind of turn: its system prompt, tools, history, model and what
 * happens with the reply. The runner calls `build` once the turn is claimed, with the
 * turn's `io` (events, stop signal, pending input, questions), which the plan passes on or
 * wraps. Register a builder with `TurnPlanBuilders.register` (e.g. in `onModuleInit`).
 */
export abstract class TurnPlanBuilder {
  abstract readonly kind: TurnKind;
  abstract build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal>;
  /**
   * A turn of this kind ended without its plan's hooks running: refused or unbuildable,
   * stopped while queued, or its replica was lost. The kind records what it must.
   */
  endedWithoutPlan?(turn: TurnRecord, ending: UnplannedEnding): Promise<void>;
  /**
   * What becomes of a turn of this kind whose replica died (see `LostTurnOutcome`); without
   * this, it is interrupted.
   */
  whenLost?(turn: TurnRecord): Promise<LostTurnOutcome>;
  /**
   * A lost turn this kind answered `completed` for was completed by the reaper: deliver its
   * recorded reply where the runner's end would have (idempotently: the dead replica may have
   * done it already).
   */
  completedWhenLost?(turn: TurnRecord): Promise<void>;
}

/**
 * What the reaper does with a turn whose replica died:
 * - `interrupt`: ends it as interrupted, with `agent:error` (input that waited is voided);
 * - `rerun`: ends it and runs it again, once, on the input it had (someone who cannot press
 *   Retry waits for its answer: a message channel's user);
 * - `completed`: its whole reply was recorded before the replica died, so it is completed as its
 *   runner would have completed it; input that came after its last step gets a follow-up turn.
 */
export type LostTurnOutcome = 'interrupt' | 'rerun' | 'completed';

export interface UnplannedEnding {
  status: 'failed' | 'interrupted';
  error: string;
  /** The turn failed because the database was unavailable (an outage of the server, not of the work). */
  outage?: boolean;
  /** What the turn had streamed before its replica died (the reaper rebuilds it from the event log). */
  partialReply?: string;
  /** A new turn runs the same input again (see `LostTurnOutcome`): nobody needs telling of this end. */
  rerun?: boolean;
}
