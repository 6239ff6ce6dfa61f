import type { TurnKind } from '#contracts/agent.js';
import { refuseTurn, TurnPlanBuilder, type TurnRefusal, type UnplannedEnding } from '#core/agent/turn-plan-builder.js';
import type { TurnRecord } from '#core/ports/turn.repository.port.js';

/**
 * A plan builder of one turn kind that refuses every turn and records the turns that ended
 * without a plan (stopped while queued, refused), as a kind's own builder would record them.
 */
export class RecordingPlanBuilder extends TurnPlanBuilder {
  readonly endedUnplanned: Array<{ turnId: string; ending: UnplannedEnding }> = [];

  constructor(readonly kind: TurnKind = 'chat') {
    super();
  }

  async build(): Promise<TurnRefusal> {
    return refuseTurn(`${this.kind} turns are not planned in this test`);
  }

  override async endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    this.endedUnplanned.push({ turnId: turn.id, ending });
  }
}
