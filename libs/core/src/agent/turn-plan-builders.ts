import { Injectable, Logger } from '@nestjs/common';
import type { TurnKind } from '#contracts/agent.js';
import { ChatPlanBuilder } from './chat-plan-builder.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { LostTurnOutcome, TurnPlanBuilder, UnplannedEnding } from './turn-plan-builder.js';

/**
 * The plan builder of each turn kind. Chat is built in; the digital-human context registers
 * its `app-chat` and `app-run` builders at start. A turn of a kind nobody registered fails
 * with that reason.
 */
@Injectable()
export class TurnPlanBuilders {
  private readonly byKind = new Map<TurnKind, TurnPlanBuilder>();
  private readonly logger = new Logger('AgentTurns');

  constructor(chat: ChatPlanBuilder) {
    this.register(chat);
  }

  register(builder: TurnPlanBuilder): void {
    if (this.byKind.has(builder.kind))
      throw new Error(`A plan builder for ${builder.kind} turns is already registered`);
    this.byKind.set(builder.kind, builder);
  }

  /** Tells the kind's builder that a turn ended without its plan; its failures are only logged. */
  async endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    const builder = this.byKind.get(turn.kind);
    await builder?.endedWithoutPlan?.(turn, ending).catch((err: Error) => {
      this.logger.warn(`recording the end of turn ${turn.id} (${turn.kind}) failed: ${err.message}`);
    });
  }

  /** What becomes of a turn lost with its replica (see `LostTurnOutcome`); `interrupt` when its kind does not say. */
  async whenLost(turn: TurnRecord): Promise<LostTurnOutcome> {
    return (await this.byKind.get(turn.kind)?.whenLost?.(turn)) ?? 'interrupt';
  }

  /** Tells the kind's builder that the reaper completed its lost turn; failures are only logged. */
  async completedWhenLost(turn: TurnRecord): Promise<void> {
    await this.byKind
      .get(turn.kind)
      ?.completedWhenLost?.(turn)
      .catch((err: Error) => {
        this.logger.warn(`delivering the reply of lost turn ${turn.id} (${turn.kind}) failed: ${err.message}`);
      });
  }

  for(kind: TurnKind): TurnPlanBuilder {
    const builder = this.byKind.get(kind);
    if (!builder) throw new Error(`no plan builder is registered for ${kind} turns`);
    return builder;
  }
}
