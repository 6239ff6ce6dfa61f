import { Injectable, Logger } from '@nestjs/common';
import { type AgentTool, ToolInputError, requireString } from '../kernel/tool.js';
import { DomainError } from '../errors/domain-error.js';
import type { KnowledgeBaseRecord } from './knowledge.ports.js';
import { DEFAULT_TOP_K, KnowledgeService, MAX_TOP_K } from './knowledge.service.js';

/** The tool's name (docs/api/knowledge.md, "The kb_search tool"). */
export const KB_SEARCH = 'kb_search';
/** Most characters of one knowledge base's document map in a system prompt. */
const MAX_MAP_CHARS = 6_000;

/** The knowledge part of one turn: the `kb_search` tool and the prompt paragraph with the document maps. */
export interface KnowledgeTurn {
  tools: AgentTool[];
  prompt: string | null;
}

const NONE: KnowledgeTurn = { tools: [], prompt: null };

/** Who a turn is: its space, its digital human (if any), a knowledge base its message named, and whether the default one applies. */
export interface KnowledgeScope {
  spaceId: string;
  appId?: string | null;
  kbId?: string | null;
  /** The assistant's chat: the default knowledge base applies too. */
  withDefault?: boolean;
}

/**
 * Gives turns their knowledge bases (docs/api/knowledge.md, "The assistant and digital humans"):
 * the active ones bound to the turn's space or digital human, the default one in the assistant's
 * chat, and one a message names (`knowledgeBaseId`) whatever the bindings. The turn gets
 * `kb_search` over exactly those, and their document maps in its system prompt.
 */
@Injectable()
export class KnowledgeTurns {
  private readonly logger = new Logger('Knowledge');

  constructor(private readonly knowledge: KnowledgeService) {}

  async forTurn(scope: KnowledgeScope): Promise<KnowledgeTurn> {
    let bases: KnowledgeBaseRecord[];
    try {
      bases = await this.knowledge.forTurn(scope);
    } catch (err) {
      // A turn goes on without its knowledge bases rather than failing.
      this.logger.warn({ msg: 'could not read the knowledge bases of a turn', error: String(err) });
      return NONE;
    }
    if (bases.length === 0) return NONE;
    const maps: string[] = [];
    for (const kb of bases) {
      const map = await this.knowledge.documentMap(kb);
      maps.push(
        map.length > MAX_MAP_CHARS ? `${map.slice(0, MAX_MAP_CHARS)}\n… (more documents; search finds them)\n` : map,
      );
    }
    const prompt = [
      `You have ${bases.length === 1 ? 'a knowledge base' : `${bases.length} knowledge bases`} (document maps below).`,
      `Search ${bases.length === 1 ? 'it' : 'them'} with the ${KB_SEARCH} tool before answering questions they may cover,`,
      'answer from the passages it returns, and cite each passage you use by its sourceName (and heading), e.g. [returns.md › Refunds].',
      'If the passages do not answer the question, say so.',
      '',
      ...maps,
    ].join('\n');
    return { tools: [this.searchTool(bases)], prompt };
  }

  private searchTool(bases: KnowledgeBaseRecord[]): AgentTool {
    const allowed = new Map(bases.map((kb) => [kb.id, kb]));
    return {
      name: KB_SEARCH,
      description:
        'Search the knowledge bases available to you for passages relevant to a question. Answers a JSON list of ' +
        'passages [{chunkId, sourceName, sourcePath, heading?, text, score}], best first; cite the sourceName of ' +
        'the passages you use. Available: ' +
        bases.map((kb) => `${kb.id} (${kb.name})`).join(', '),
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What to look for: a question or keywords, in any language' },
          kbIds: {
            type: 'array',
            items: { type: 'string' },
            description: 'Only these knowledge bases (default: all available)',
          },
          topK: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_TOP_K,
            description: `How many passages (default ${DEFAULT_TOP_K})`,
          },
        },
        required: ['query'],
      },
      run: async (input) => {
        try {
          const query = requireString(input, 'query');
          let ids = [...allowed.keys()];
          if (input.kbIds !== undefined && input.kbIds !== null) {
            if (!Array.isArray(input.kbIds) || !input.kbIds.every((id) => typeof id === 'string')) {
              throw new ToolInputError('kbIds must be a list of knowledge base ids');
            }
            const unknown = (input.kbIds as string[]).filter((id) => !allowed.has(id));
            if (unknown.length > 0) {
              throw new ToolInputError(`Not available to you: ${unknown.join(', ')} (available: ${ids.join(', ')})`);
            }
            if (input.kbIds.length > 0) ids = input.kbIds as string[];
          }
          const hits = await this.knowledge.searchMany(ids, { query, topK: input.topK ?? DEFAULT_TOP_K });
          return { output: JSON.stringify(hits.map(({ kbId: _kb, ...hit }) => hit)), isError: false };
        } catch (err) {
          if (err instanceof ToolInputError || err instanceof DomainError)
            return { output: err.message, isError: true };
          throw err;
        }
      },
    };
  }
}
