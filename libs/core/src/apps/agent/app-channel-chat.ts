import { Injectable } from '@nestjs/common';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { AgentService } from '../../agent/agent.service.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import type { Message } from '../../kernel/conversation.js';
import {
  type ChannelApp,
  ChannelChat,
  type ChannelChatListener,
  type ChannelReply,
  type ChannelTurnInput,
  type EscalationAsked,
  type OpenEscalation,
  type RunResult,
} from '../../ports/channel-chat.port.js';
import { SpacesService } from '../../spaces/spaces.service.js';
import { AppsService } from '../apps.service.js';

/**
 * The digital-human side of message channels (docs/api/channels.md): a channel thread is an
 * app chat thread (`app-chat:<appId>:<channel>:<direct|group>:<chatId>`), its turns of kind
 * `app-chat` carrying where they came from (`request.channel`) and whether the sender is a
 * guest (`request.guest`). The plan's end and a run's result are told to the listener (the
 * channels context), which sends them back to the platform.
 */
@Injectable()
export class AppChannelChat extends ChannelChat {
  private readonly listeners: ChannelChatListener[] = [];
  /** The runs' escalation answers (registered by AppRunsService, which depends on this class). */
  private escalations: EscalationDesk | null = null;

  constructor(
    private readonly apps: AppsService,
    private readonly agent: AgentService,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
  ) {
    super();
  }

  async app(appId: string): Promise<ChannelApp | null> {
    const app = await this.apps.get(appId).catch(() => null);
    if (!app || app.status === 'uninstalled') return null;
    return { id: app.id, name: app.spec.display_name ?? app.spec.name, spaceId: app.spaceId };
  }

  async appExists(appId: string): Promise<boolean> {
    return (await this.apps.get(appId).catch(() => null)) !== null;
  }

  async submit(input: ChannelTurnInput): Promise<'started' | 'merged' | 'duplicate'> {
    // The app comes as the channel read it for this message: only the thread is read here.
    const { app } = input;
    // The thread and its digital human's space side by side: a thread lies in that space unless
    // it was opened elsewhere (then its own space is read after).
    const appSpaceId = app.spaceId ?? TEMP_SPACE_ID;
    const [existing, appSpace] = await Promise.all([
      this.conversations.findById(input.threadId),
      this.spaces.get(appSpaceId).catch(() => null),
    ]);
    const spaceId = existing?.spaceId ?? appSpaceId;
    const space = appSpace !== null && spaceId === appSpaceId ? appSpace : await this.spaces.get(spaceId);
    if (!existing) await this.conversations.openWithId(space, input.threadId, { title: input.title, appId: app.id });
    return this.agent.submitMessage({
      kind: 'app-chat',
      space,
      conversationId: input.threadId,
      message: input.message,
      images: input.images,
      meta: { appId: app.id, channel: input.origin },
      request: { appId: app.id, channel: input.origin, guest: input.guest },
      messageId: input.messageId,
    });
  }

  async stop(threadId: string): Promise<void> {
    await this.agent.stop(threadId);
  }

  async clear(threadId: string): Promise<void> {
    await this.agent.stop(threadId);
    const thread = await this.conversations.findById(threadId);
    if (thread) await this.conversations.remove(thread.spaceId, threadId).catch(() => undefined);
  }

  async messages(threadId: string): Promise<Message[]> {
    const thread = await this.conversations.findById(threadId);
    if (!thread) return [];
    return (await this.conversations.get(thread.spaceId, thread.id)).messages;
  }

  listen(listener: ChannelChatListener): void {
    this.listeners.push(listener);
  }

  /** A channel thread's turn ended with a reply (called by the app-chat plan, on the replica that ran it). */
  async replied(reply: ChannelReply): Promise<void> {
    for (const l of this.listeners) await l.replied(reply);
  }

  /** The runs register how open questions are read and answered. */
  useEscalations(desk: EscalationDesk): void {
    this.escalations = desk;
  }

  async openEscalation(appId: string): Promise<OpenEscalation | null> {
    return (await this.escalations?.open(appId)) ?? null;
  }

  async answerEscalation(appId: string, entryId: string, answer: { choice?: string; text?: string }): Promise<boolean> {
    return (await this.escalations?.answer(appId, entryId, answer)) ?? false;
  }

  /** A run opened an escalation (called by the runs, on the replica that ran it). */
  async escalated(asked: EscalationAsked): Promise<void> {
    for (const l of this.listeners) await l.escalated?.(asked);
  }

  /** A run reported its result (called by the runs, on the replica that ran it). */
  async runResult(result: RunResult): Promise<void> {
    for (const l of this.listeners) await l.runResult(result);
  }
}

/** How the runs read and answer an app's open question. */
export interface EscalationDesk {
  open(appId: string): Promise<OpenEscalation | null>;
  answer(appId: string, entryId: string, answer: { choice?: string; text?: string }): Promise<boolean>;
}
