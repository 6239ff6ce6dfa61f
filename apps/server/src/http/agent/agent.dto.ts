import { IsOptional } from 'class-validator';
import { REASONING_EFFORTS, type ReasoningEffort } from '#contracts/conversations.js';
import { MAX_ATTACHMENTS } from '#core/agent/message-attachments.js';
import { ArrayBodyAsEmpty, Check, Documented, ImagesField, OpenBody } from '../common/validation.js';

/** Request bodies of "The assistant" (docs/api.md); the texts are the ones it fixes. */

const nonBlank = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';
const required = (field: string): string => `${field} is required and must be a string`;
const isPlainObject = (value: unknown): boolean => !!value && typeof value === 'object' && !Array.isArray(value);

@ArrayBodyAsEmpty()
export class SendMessageDto {
  @Check(nonBlank, required('spaceId'), { type: 'string' })
  spaceId: string;

  @Check(nonBlank, required('conversationId'), { type: 'string' })
  conversationId: string;

  @Check(nonBlank, required('message'), { type: 'string' })
  message: string;

  @IsOptional()
  @Check(
    (v) => REASONING_EFFORTS.includes(v as ReasoningEffort),
    `reasoningEffort must be one of ${REASONING_EFFORTS.join(', ')}`,
    { type: 'string', enum: [...REASONING_EFFORTS] },
  )
  reasoningEffort?: ReasoningEffort | null;

  /** null is refused too (only absent means "the default"). */
  @Check((v) => v === undefined || typeof v === 'boolean', 'thinkingEnabled must be a boolean', { type: 'boolean' })
  thinkingEnabled?: boolean;

  @ImagesField()
  images?: unknown[] | null;

  /** Files already in the space (uploaded first), by path; the service judges each item (docs/api.md, "Attachments"). */
  @IsOptional()
  @Check((v) => Array.isArray(v), 'attachments must be an array', {
    type: 'array',
    maxItems: MAX_ATTACHMENTS,
    items: {
      type: 'object',
      required: ['path'],
      properties: {
        path: {
          type: 'string',
          description:
            "Relative to the space's folder (or absolute inside it). Images (PNG, JPEG, GIF, WebP, at most 5 MB each) reach the model as images; other files are named for it to Read",
        },
      },
    },
  })
  attachments?: unknown[] | null;

  /** Opens (true) or closes (false) the conversation's `ai-browser` toolset from this turn on. */
  @IsOptional()
  @Check((v) => typeof v === 'boolean', 'aiBrowserEnabled must be a boolean', { type: 'boolean' })
  aiBrowserEnabled?: boolean | null;

  /** Gives this turn the `kb_search` tool over that knowledge base, whatever its bindings (docs/api/knowledge.md). */
  @IsOptional()
  @Check((v) => typeof v === 'string', 'knowledgeBaseId must be a string', { type: 'string' })
  knowledgeBaseId?: string | null;
}

@ArrayBodyAsEmpty()
export class StopDto {
  @IsOptional()
  @Check((v) => typeof v === 'string', 'conversationId must be a string', {
    type: 'string',
    description: 'Omit to stop every running turn',
  })
  conversationId?: string | null;
}

@ArrayBodyAsEmpty()
export class AnswerQuestionDto {
  @Check(nonBlank, required('conversationId'), { type: 'string' })
  conversationId: string;

  @Check(nonBlank, required('id'), { type: 'string', description: 'The ask-… id of agent:ask-question' })
  id: string;

  @Check(isPlainObject, 'answers is required and must be an object', { type: 'object' })
  answers: Record<string, unknown>;
}

/**
 * `approve` and `reject`: without an approval policy the specification's no-ops, whatever the
 * body (so nothing is checked here); with one, the approvals service judges the fields (400
 * naming them) and decides the conversation's waiting call (of `toolId` when given).
 */
@ArrayBodyAsEmpty()
export class ApproveDto {
  @Documented({ type: 'string', description: 'The conversation whose waiting tool call is answered' })
  conversationId?: unknown;

  @Documented({ type: 'string', description: 'The tool-use id of agent:tool-call; omitted: whichever call waits' })
  toolId?: unknown;
}

@ArrayBodyAsEmpty()
export class RejectDto extends ApproveDto {
  @Documented({ type: 'string', description: 'Told to the model: "The user rejected this tool call: <reason>"' })
  reason?: unknown;
}

@ArrayBodyAsEmpty()
export class ToolsetsDto {
  @Check(nonBlank, required('spaceId'), { type: 'string' })
  spaceId: string;

  @Check(nonBlank, required('conversationId'), { type: 'string' })
  conversationId: string;
}

export class ToolsetChangeDto extends ToolsetsDto {
  @Check(nonBlank, required('toolsetId'), { type: 'string', description: 'An openable toolset: ai-browser' })
  toolsetId: string;
}

/** Both fields are judged by the MCP service (which of them applies depends on `servers`). */
@ArrayBodyAsEmpty()
export class TestMcpDto {
  @Documented({
    type: 'object',
    description:
      'Servers to test, by name: an mcp_server definition each ({command, args, env} for stdio, {type: "http", url, headers} for streamable HTTP). Omit to test the installed servers',
  })
  servers?: unknown;

  @Documented({ type: 'string', description: 'With installed servers: only those of this space and the global ones' })
  spaceId?: unknown;
}

/**
 * A model source test (docs/api.md, "Testing a model source"): the service judges the fields
 * after its lookups (404 for an unknown `modelSourceId`, 403 through the assistant's listener).
 */
@OpenBody({ description: 'A stored source (`modelSourceId`), an unsaved one (`source`), or both' })
export class TestModelSourceDto {
  [extra: string]: unknown;

  @Documented({ type: 'string', description: 'A stored source (404 when unknown)' })
  modelSourceId?: unknown;

  @Documented({
    type: 'object',
    additionalProperties: true,
    description:
      'An unsaved source, as POST /api/ai-sources/sources takes it (name optional); with modelSourceId, unsaved edits of that source ("***" or no apiKey keeps the stored key)',
  })
  source?: unknown;

  @Documented({ type: 'string', description: "The model to call; the source's model when omitted" })
  modelId?: unknown;
}
