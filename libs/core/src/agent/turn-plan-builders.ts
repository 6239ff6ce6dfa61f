import { Injectable } from '@nestjs/common';
import type { TurnKind } from '#contracts/agent.js';
import { ChatPlanBuilder } from './chat-plan-builder.js';
import type { TurnPlanBuilder } from './turn-plan-builder.js';

/**
 * The plan builder of each turn kind. Chat is built in; the digital-human context registers
 * its `app-chat` and `app-run` builders at start. A turn of a kind nobody registered fails
 * with that reason.
 */
@Injectable()
export class TurnPlanBuilders {
  private readonly byKind = new Map<TurnKind, TurnPlanBuilder>();

  constructor(chat: ChatPlanBuilder) {
    this.register(chat);
  }

  register(builder: TurnPlanBuilder): void {
    if (this.byKind.has(builder.kind))
      throw new Error(`A plan builder for ${builder.kind} turns is already registered`);
    this.byKind.set(builder.kind, builder);
  }

  for(kind: TurnKind): TurnPlanBuilder {
    const builder = this.byKind.get(kind);
    if (!builder) throw new Error(`no plan builder is registered for ${kind} turns`);
    return builder;
  }
}
