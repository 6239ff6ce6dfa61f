import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AgentChannels,
  AgentInternalChannels,
  type ApiRetryInfo,
  type AskQuestion,
  type SessionState,
  type Thought,
  type ToolsetEntry,
  type TurnKind,
} from '#contracts/agent.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { DomainError } from '../errors/domain-error.js';
import { requiredString } from '../errors/input-rules.js';
import { McpServers } from '../mcp/mcp-servers.service.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FileStore } from '../ports/file-store.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { REASONING_EFFORTS, type ReasoningEffort } from '../ports/model-provider.port.js';
import { type NewTurn, type PendingInput, type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import { SERVICE_FOLDER, type Space } from '../kernel/space.js';
import { SpacesService } from '../spaces/spaces.service.js';
import type { ImageAttachment } from './context-builder.js';
import { ConversationEvents } from './conversation-events.js';
import { ATTACHMENTS_META, MessageAttachments } from './message-attachments.js';
import { ConversationToolsets, OPENABLE_TOOLSETS } from './conversation-toolsets.js';
import { ToolRegistry } from './tool-registry.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';
import { announceQueuedTurn } from './turn-announce.js';
import { endUnfinishedTurn, toWireMessages, TurnTexts } from './turn-endings.js';

export interface SendMessageInput {
  spaceId?: unknown;
  conversationId?: unknown;
  message?: unknown;
  thinkingEnabled?: unknown;
  reasoningEffort?: unknown;
  images?: unknown;
  /** Files of the space sent with the message, by path (docs/api.md, "Attachments"). */
  attachments?: unknown;
  resumeSessionId?: unknown;
  knowledgeBaseId?: unknown;
  aiBrowserEnabled?: unknown;
}

const MEMORY_SNAPSHOT_MAX_BYTES = 64 * 1024;

/** The agent operations of the API: accept messages, stop, answer, and report state. */
@Injectable()
export class AgentService {
  constructor(
    private readonly turns: TurnRepository,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly events: ConversationEvents,
    private readonly bus: EventBus,
    private readonly queue: JobQueue,
    private readonly files: FileStore,
    private readonly tools: ToolRegistry,
    private readonly clock: Clock,
    private readonly builders: TurnPlanBuilders,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mcp: McpServers,
    private readonly toolsetStates: ConversationToolsets,
    private readonly attachments: MessageAttachments,
  ) {}

  /**
   * Records the user's message and starts a turn (a job), answering at once. While the
   * conversation is generating, the message is recorded and handed to the running turn at
   * its next step instead.
   */
  async sendMessage(input: SendMessageInput): Promise<void> {
    const spaceId = requiredString(input.spaceId, 'spaceId');
    const conversationId = requiredString(input.conversationId, 'conversationId');
    const message = requiredString(input.message, 'message');
    const reasoningEffort = optionalEffort(input.reasoningEffort);
    if (input.thinkingEnabled !== undefined && typeof input.thinkingEnabled !== 'boolean') {
      throw DomainError.invalid('thinkingEnabled must be a boolean');
    }
    if (
      input.aiBrowserEnabled !== undefined &&
      input.aiBrowserEnabled !== null &&
      typeof input.aiBrowserEnabled !== 'boolean'
    ) {
      throw DomainError.invalid('aiBrowserEnabled must be a boolean');
    }
    if (
      input.knowledgeBaseId !== undefined &&
      input.knowledgeBaseId !== null &&
      typeof input.knowledgeBaseId !== 'string'
    ) {
      throw DomainError.invalid('knowledgeBaseId must be a string');
    }
    const images = parseImages(input.images);
    // The space from the repository (in memory where this process is the database's only
    // writer); the conversation's checks (it exists, is in this space, has messages) are
    // made by the write itself, so the request makes one round trip to the database.
    const space = await this.spaces.get(spaceId);
    // Checked before anything is written: a refused attachment leaves the conversation as it was.
    const attached = await this.attachments.resolve(space, input.attachments);
    await this.submitMessage({
      kind: 'chat',
      space,
      conversationId,
      message,
      images,
      // The record keeps references only; a turn reads the images when it builds the context.
      meta: attached.length > 0 ? { [ATTACHMENTS_META]: attached } : {},
      request: {
        ...(reasoningEffort ? { reasoningEffort } : {}),
        ...(typeof input.thinkingEnabled === 'boolean' ? { thinkingEnabled: input.thinkingEnabled } : {}),
        // The turn's plan opens or closes the conversation's browser (no extra write on this path).
        ...(typeof input.aiBrowserEnabled === 'boolean' ? { aiBrowserEnabled: input.aiBrowserEnabled } : {}),
        // This turn gets kb_search over that knowledge base, whatever the bindings (docs/api/knowledge.md).
        ...(typeof input.knowledgeBaseId === 'string' && input.knowledgeBaseId !== ''
          ? { knowledgeBaseId: input.knowledgeBaseId }
          : {}),
      },
      inSpace: true,
      // The first message of a conversation carries the space's memory as it was then.
      firstMeta: this.spaces.preferencesOf(space).memory.enabled
        ? async () => {
            const snapshot = await this.readMemory(space);
            return snapshot ? { memorySnapshot: snapshot } : {};
          }
        : undefined,
    });
  }

  /**
   * Records a user's message in an existing conversation and starts a turn of `kind` for it
   * (answering at once), or, while the conversation is generating, hands it to the running
   * turn for its next step. `meta` goes with a message that starts a turn; `request` is kept
   * on the turn for its plan builder. With `inSpace`, a conversation of another space is not
   * found. `firstMeta`, when given, is added to `meta` if the conversation has no message yet;
   * it must not reject. For a conversation this process just created it is awaited and goes
   * with the write (which adds it only to a first message); otherwise it is read alongside a
   * write that finds out whether the message is the first (writing nothing then), and the
   * write is made again with it.
   *
   * The message and its queued turn are written in one transaction and one round trip
   * (ConversationRepository.submitUserMessage), so `agent:turn-start` follows the request
   * after a single write and a crash never leaves the message without its turn.
   */
  async submitMessage(submission: {
    kind: TurnKind;
    space: Space;
    conversationId: string;
    message: string;
    images: ImageAttachment[];
    meta: Record<string, unknown>;
    request: Record<string, unknown>;
    inSpace?: boolean;
    firstMeta?: () => Promise<Record<string, unknown>>;
    /**
     * The message's id when the caller derives it from where the message came from (a channel
     * message's platform id): a second submission of it writes nothing and answers 'duplicate'.
     */
    messageId?: string;
  }): Promise<'started' | 'merged' | 'duplicate'> {
    const { kind, space, conversationId, message, images, firstMeta } = submission;
    const messageId = submission.messageId ?? randomUUID();
    const request = { ...submission.request, messageId };
    // Should a turn be active, the message goes to it as input in the same write (see below).
    const input = { messageId, content: message, kind, request };
    const liveInput: PendingInput = { ...input, createdAt: new Date(this.clock.now()).toISOString() };
    const write = (meta: Record<string, unknown>, unlessFirst: boolean, ifFirst?: Record<string, unknown>) =>
      this.conversations.submitUserMessage(conversationId, {
        messageId,
        content: message,
        meta: { ...(images.length > 0 ? { images } : {}), ...meta },
        liveMeta: { ...meta, live: true, ...(images.length > 0 ? { images } : {}) },
        turn: { id: randomUUID(), kind, spaceId: space.id, conversationId, request },
        ...(submission.inSpace ? { inSpace: space.id } : {}),
        unlessFirst,
        ...(ifFirst ? { firstMeta: ifFirst } : {}),
        idFromSource: submission.messageId !== undefined,
        liveInput,
      });
    let submitted: Awaited<ReturnType<typeof write>>;
    if (this.conversations.takeFreshHint(conversationId) && firstMeta) {
      // Just created here: most likely the first message, one write with what a first one carries.
      submitted = await write(submission.meta, false, await firstMeta());
    } else {
      // What a first message adds is read alongside the write that finds out whether it is the
      // first (a conversation's first turn would otherwise wait for the read between two
      // writes); for any later message the read's answer goes unused.
      const firstMetaRead = firstMeta?.();
      submitted = await write(submission.meta, firstMetaRead !== undefined);
      if (submitted === 'first') submitted = await write({ ...submission.meta, ...(await firstMetaRead!) }, false);
    }
    if (submitted === 'first') throw new Error('submit_user_message answered "first" unasked');
    if (submitted === 'exists') return 'duplicate';
    if (submitted.turn) {
      await this.announceTurn(submitted.turn);
      return 'started';
    }
    // A turn is active: the message went to it as input with the write, for its next step; should
    // it reach the turn too late for that, the turn's follow-up answers it with this kind and request.
    if (submitted.handed) {
      await this.announceInput(space, conversationId, liveInput);
      return 'merged';
    }
    // The active turn is stopping: once it has ended, a new one starts for the stored message
    // (or the message goes to one that started in its place meanwhile).
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.handToRunningTurn(space, conversationId, input)) return 'merged';
      if (await this.queueTurn({ kind, spaceId: space.id, conversationId, request })) return 'started';
    }
    throw new Error(`conversation ${conversationId}: its message found neither an active turn nor room for one`);
  }

  /**
   * Queues a turn of `kind` and announces it (`agent:turn-start`, then the `agent.turn`
   * job); null when the conversation already has an active turn.
   */
  async queueTurn(turn: Omit<NewTurn, 'id'> & { id?: string }): Promise<TurnRecord | null> {
    const queued = await this.turns.createQueued({ ...turn, id: turn.id ?? randomUUID() });
    if (!queued) return null;
    await this.announceTurn(queued);
    return queued;
  }

  private async announceTurn(queued: TurnRecord): Promise<void> {
    await announceQueuedTurn(this.events, this.queue, queued);
  }

  private async handToRunningTurn(
    space: Space,
    conversationId: string,
    sent: Omit<PendingInput, 'createdAt'>,
  ): Promise<boolean> {
    const input: PendingInput = { ...sent, createdAt: new Date(this.clock.now()).toISOString() };
    const turn = await this.turns.addPendingInput(conversationId, input);
    if (!turn) return false;
    await this.announceInput(space, conversationId, input);
    return true;
  }

  /** `agent:input-arrived` for a message handed to the conversation's active turn. */
  private async announceInput(space: Space, conversationId: string, input: PendingInput): Promise<void> {
    await this.events.emit(space.id, conversationId, AgentChannels.inputArrived, {
      messages: toWireMessages([input]),
      live: true,
    });
  }

  /** Stops one conversation's turn, or every turn. Repeated stops are harmless. */
  async stop(conversationId?: string | null): Promise<void> {
    const flagged = await this.turns.requestStop(conversationId ? conversationId : null);
    const running = flagged.filter((t) => t.status === 'running').map((t) => t.id);
    if (running.length > 0) await this.bus.publish(AgentInternalChannels.stop, { turnIds: running });
    // A turn no worker has picked up yet ends here.
    for (const turn of flagged.filter((t) => t.status === 'queued')) await this.endQueued(turn);
  }

  private async endQueued(turn: TurnRecord): Promise<void> {
    await endUnfinishedTurn(this.turns, turn.id, this.events.emitterFor(turn.spaceId, turn.conversationId), {
      status: 'interrupted',
      error: TurnTexts.stopped,
      errorFields: { errorType: 'interrupted' },
      durationMs: this.clock.now() - turn.createdAt.getTime(),
    });
    await this.builders.endedWithoutPlan(turn, { status: 'interrupted', error: TurnTexts.stopped });
  }

  /** Resumes a turn waiting on AskUserQuestion; false when no such question is pending. */
  async answerQuestion(input: {
    conversationId: string;
    id: string;
    answers: Record<string, unknown>;
  }): Promise<boolean> {
    const { conversationId, id, answers } = input;
    if (!(await this.turns.answerQuestion(conversationId, id, answers))) return false;
    const turn = await this.turns.findActive(conversationId);
    if (turn) await this.bus.publish(AgentInternalChannels.answer, { turnId: turn.id });
    return true;
  }

  async isGenerating(conversationId: string): Promise<boolean> {
    return (await this.turns.findActive(conversationId)) !== null;
  }

  async sessions(): Promise<string[]> {
    return (await this.turns.listActive()).map((t) => t.conversationId);
  }

  async session(conversationId: string): Promise<SessionState> {
    const turn = await this.turns.findActive(conversationId);
    return {
      conversationId,
      spaceId: turn?.spaceId ?? null,
      active: turn !== null,
      turnId: turn?.id ?? null,
      status: turn?.status ?? null,
      startedAt: (turn?.startedAt ?? turn?.createdAt)?.toISOString() ?? null,
      thoughts: (turn?.thoughts ?? []) as Thought[],
      pendingQuestion:
        turn?.pendingQuestion && !turn.questionAnswer
          ? { id: turn.pendingQuestion.id, questions: turn.pendingQuestion.questions as AskQuestion[] }
          : null,
      pendingApproval:
        turn?.pendingApproval && !turn.approvalDecision
          ? {
              toolId: turn.pendingApproval.toolId,
              name: turn.pendingApproval.name,
              input: turn.pendingApproval.input,
              deadline: turn.pendingApproval.deadline,
            }
          : null,
      pendingRetry: (turn?.pendingRetry as ApiRetryInfo | null) ?? null,
      replicaId: turn?.replicaId ?? null,
    };
  }

  /**
   * Capabilities of a conversation: the server's built-in tools are always on, Bash by
   * configuration, the MCP servers of the chat; the AI browser when the conversation opened it.
   */
  async toolsets(spaceId: string, conversationId: string): Promise<ToolsetEntry[]> {
    await this.spaces.get(spaceId);
    const open = await this.toolsetStates.openOf(conversationId);
    return [
      {
        id: 'workspace-files',
        displayName: 'Workspace files',
        summary: 'Read, write, edit and search files in the workspace folder',
        open: true,
      },
      {
        id: 'shell',
        displayName: 'Shell',
        summary: 'Run shell commands in the workspace folder',
        open: this.tools.names().includes('Bash'),
      },
      // The chat's MCP servers: the space's and global ones (docs/api/mcp-and-skills.md, "MCP servers"), offered in every turn.
      ...(await this.mcp.chatServersOf(spaceId)).map((server) => ({
        id: `mcp:${server.name}`,
        displayName: server.displayName,
        summary: server.summary,
        open: true,
      })),
      ...OPENABLE_TOOLSETS.map((t) => ({ ...t, open: open.includes(t.id) })),
    ];
  }

  /** `toolsets/open|close`: the conversation (of that space) opens or closes an openable toolset. */
  async changeToolset(
    input: { spaceId: string; conversationId: string; toolsetId: string },
    open: boolean,
  ): Promise<ToolsetEntry[]> {
    await this.conversations.get(input.spaceId, input.conversationId);
    await this.toolsetStates.set(input.spaceId, input.conversationId, input.toolsetId, open, 'user');
    return this.toolsets(input.spaceId, input.conversationId);
  }

  capabilities(): Record<string, unknown> {
    return {
      engine: 'svc',
      providers: ['anthropic', 'openai'],
      tools: this.tools.names(),
      thinking: true,
      images: true,
      compaction: true,
      askUserQuestion: true,
      mcp: true,
      maxSteps: this.config.agent.maxSteps,
      resumableEvents: true,
    };
  }

  private async readMemory(space: Space): Promise<string | null> {
    try {
      const target = await this.files.resolve({
        roots: [space.path],
        base: space.path,
        path: `${SERVICE_FOLDER}/memory.md`,
      });
      const data = await this.files.readFile(target, MEMORY_SNAPSHOT_MAX_BYTES);
      return data === 'too-large' ? null : data.toString('utf8');
    } catch {
      return null;
    }
  }
}

function optionalEffort(value: unknown): ReasoningEffort | undefined {
  if (value === undefined || value === null) return undefined;
  if (!REASONING_EFFORTS.includes(value as ReasoningEffort)) {
    throw DomainError.invalid(`reasoningEffort must be one of ${REASONING_EFFORTS.join(', ')}`);
  }
  return value as ReasoningEffort;
}

/** `images`: base64 strings, data URLs, or `{data, mediaType|mimeType}` objects. */
export function parseImages(value: unknown): ImageAttachment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw DomainError.invalid('images must be an array');
  return value.map((item, i) => {
    if (typeof item === 'string') {
      const match = /^data:([^;]+);base64,(.*)$/s.exec(item);
      return match ? { mediaType: match[1]!, data: match[2]! } : { mediaType: 'image/png', data: item };
    }
    const obj = item as { data?: unknown; mediaType?: unknown; mimeType?: unknown; media_type?: unknown };
    const mediaType = obj?.mediaType ?? obj?.mimeType ?? obj?.media_type ?? 'image/png';
    if (typeof obj?.data !== 'string' || typeof mediaType !== 'string') {
      throw DomainError.invalid(`images[${i}] must be a base64 string or {data, mediaType}`);
    }
    const data = obj.data.replace(/^data:[^;]+;base64,/, '');
    return { mediaType, data };
  });
}
