import type { ConversationTitles } from '#core/agent/conversation-titles.js';
import type { AgentTool } from '#core/kernel/tool.js';
import type { Space } from '#core/kernel/space.js';
import { KB_SEARCH, type KnowledgeScope, type KnowledgeTurn, KnowledgeTurns } from '#core/knowledge/knowledge-turns.js';
import type { KnowledgeService } from '#core/knowledge/knowledge.service.js';
import type { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import type { FileStore } from '#core/ports/file-store.port.js';
import type { SpaceFolders } from '#core/ports/space-folders.port.js';
import type { SpaceRepository } from '#core/ports/space.repository.port.js';
import { SKILL_TOOL } from '#core/skills/skill-rules.js';
import { SkillsService, type TurnSkills } from '#core/skills/skills.service.js';

/**
 * The parts of a turn plan that other contexts give (skills, knowledge bases, memory, titles),
 * as plan builder specs need them: set by hand, recording what the builder asked.
 */

const tool = (name: string): AgentTool => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: {} },
  run: async () => ({ output: '', isError: false }),
});

/** The skills of every space: `installed` names give the `Skill` tool and a prompt naming them. */
export class FakeSkills extends SkillsService {
  readonly installed: string[] = [];
  /** `spaceId message` of each turn that asked. */
  readonly asked: string[] = [];

  constructor() {
    super({} as FileStore, {} as SpaceFolders, {} as SpaceRepository, { dataDir: '/data' });
  }

  override async forTurn(space: Space, message: string | null): Promise<TurnSkills> {
    this.asked.push(`${space.id} ${message}`);
    if (this.installed.length === 0) return { tools: [], prompt: '', names: [] };
    return { tools: [tool(SKILL_TOOL)], prompt: `Skills: ${this.installed.join(', ')}`, names: [...this.installed] };
  }
}

/** The prompt paragraph FakeKnowledgeTurns gives a turn that has a knowledge base. */
export const FAKE_KNOWLEDGE_PROMPT = 'You have a knowledge base.';

/**
 * Knowledge bases bound by hand: a turn whose space, app or named base is in `bound`
 * (`space:<id>`, `app:<id>`, `kb:<id>`, or `default` for a chat's default base) gets `kb_search`.
 */
export class FakeKnowledgeTurns extends KnowledgeTurns {
  readonly bound = new Set<string>();
  readonly scopes: KnowledgeScope[] = [];

  constructor() {
    super({} as KnowledgeService);
  }

  override async forTurn(scope: KnowledgeScope): Promise<KnowledgeTurn> {
    this.scopes.push(scope);
    const keys = [
      `space:${scope.spaceId}`,
      ...(scope.appId ? [`app:${scope.appId}`] : []),
      ...(scope.kbId ? [`kb:${scope.kbId}`] : []),
      ...(scope.withDefault ? ['default'] : []),
    ];
    return keys.some((k) => this.bound.has(k))
      ? { tools: [tool(KB_SEARCH)], prompt: FAKE_KNOWLEDGE_PROMPT }
      : { tools: [], prompt: null };
  }
}

/** Memory consolidation offered after a turn: the spaces asked, in order. */
export class RecordingMemory implements Pick<MemoryConsolidationService, 'afterTurn'> {
  readonly calls: string[] = [];

  async afterTurn(spaceId: string): Promise<null> {
    this.calls.push(spaceId);
    return null;
  }
}

/** Conversation titling after a turn: `spaceId conversationId` of each, in order. */
export class RecordingTitles implements Pick<ConversationTitles, 'afterTurn'> {
  readonly calls: string[] = [];

  async afterTurn(spaceId: string, conversationId: string): Promise<void> {
    this.calls.push(`${spaceId} ${conversationId}`);
  }
}
