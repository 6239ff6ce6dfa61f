import { Injectable } from '@nestjs/common';
import { AgentChannels } from '#contracts/agent.js';
import { isCompactionSummary, type Message } from '../kernel/conversation.js';
import type { ModelPin } from '../models/model-source-rules.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { ModelProvider } from '../ports/model-provider.port.js';
import { lastUserText } from '../skills/skill-rules.js';
import { SkillsService, type TurnSkills } from '../skills/skills.service.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { Space } from '../kernel/space.js';
import { SpacesService } from '../spaces/spaces.service.js';
import type { ModelSelection, TurnIO } from './engine/turn-plan.js';
import { TurnTexts } from './turn-endings.js';
import { isRefusal, refuseTurn, type TurnRefusal } from './turn-plan-builder.js';

/** Where a turn works and which model it talks to, once the preamble found both. */
export interface TurnGround {
  space: Space;
  model: Omit<ModelSelection, 'effort'>;
}

/**
 * What every turn kind checks before it builds its plan: a conversation's first turn
 * announces `agent:session-info`, the space's folder must exist, and a model must be found
 * for the pins given, first to last (a pin whose source is gone falls back to the current
 * source). Chat, a digital human's chat and its runs share it.
 */
@Injectable()
export class TurnPreamble {
  constructor(
    private readonly spaces: SpacesService,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly skills: SkillsService,
  ) {}

  /**
   * The preamble of a conversation's turn (chat, a digital human's chat) with the skills it
   * sees: the session info names them, and a `/name` opening the latest user message loads
   * that skill (the plan puts `skills.tools` in its tool set and `withSkills` in its prompt).
   */
  async prepareWithSkills(input: {
    turn: TurnRecord;
    io: TurnIO;
    messages: readonly Message[];
    pins: ReadonlyArray<ModelPin | null>;
    /** The turn's space when the caller read it already (`ConversationsService.forTurn`). */
    space?: Space;
  }): Promise<(TurnGround & { skills: TurnSkills }) | TurnRefusal> {
    // The space is read once for the skills and the preamble.
    const space = input.space ?? (await this.spaces.get(input.turn.spaceId));
    const skills = await this.skills.forTurn(space, lastUserText(input.messages));
    const ground = await this.prepare({ ...input, space, skillNames: skills.names });
    return isRefusal(ground) ? ground : { ...ground, skills };
  }

  async prepare(input: {
    turn: TurnRecord;
    io: TurnIO;
    /** The conversation's messages (from its latest compaction on): without a reply yet, session info is announced. null: never. */
    messages: readonly Message[] | null;
    /** Skills (and their slash commands) the session info names. */
    skillNames?: readonly string[];
    /** Model choices, most specific first (a conversation's pin, an app's override); null entries are skipped. */
    pins: ReadonlyArray<ModelPin | null>;
    /** The turn's space when the caller read it already. */
    space?: Space;
  }): Promise<TurnGround | TurnRefusal> {
    const space = input.space ?? (await this.spaces.get(input.turn.spaceId));
    // (A conversation compacted had replies: its messages may begin at the summary.)
    if (input.messages && !input.messages.some((m) => m.role === 'assistant' || isCompactionSummary(m))) {
      const skills = [...(input.skillNames ?? [])];
      await input.io.emit(AgentChannels.sessionInfo, { slashCommands: skills, skills, agents: [] });
    }
    if (!(await this.spaces.folderExists(space))) {
      return refuseTurn(TurnTexts.workDirMissing, {
        errorType: 'working_dir_unavailable',
        workDirIssue: { path: space.path, reason: 'missing' },
      });
    }
    const resolved = await this.models.resolveForConversation(input.pins.find((p) => p !== null) ?? null);
    if (!resolved) return refuseTurn(TurnTexts.noModel, { errorCode: 'NO_MODEL' });
    return {
      space,
      model: {
        endpoint: resolved.endpoint,
        model: resolved.model,
        info: this.provider.info(resolved.endpoint.provider, resolved.model),
      },
    };
  }
}

/** A conversation's own pin, when it has one. */
export function conversationPin(conversation: {
  modelSourceId: string | null;
  modelId: string | null;
}): ModelPin | null {
  return conversation.modelSourceId && conversation.modelId
    ? { modelSourceId: conversation.modelSourceId, modelId: conversation.modelId }
    : null;
}
