import { ErrorCodes } from '#contracts/errors.js';
import { Injectable } from '@nestjs/common';
import {
  AppChannels,
  type AppChatSessionStateDto,
  type AppImSessionUpdatedEvent,
  appChatConversationId,
} from '#contracts/apps.js';
import { AgentService, parseImages } from '../../agent/agent.service.js';
import type { Message } from '../../kernel/conversation.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { DomainError } from '../../errors/domain-error.js';
import { EventBus } from '../../ports/event-bus.port.js';
import type { Space } from '../../kernel/space.js';
import { SpacesService } from '../../spaces/spaces.service.js';
import type { App } from '../../kernel/app.js';
import { AppErrors, AppsService } from '../apps.service.js';
import { AppWork } from './app-work.js';

/** A chat message as the edge has checked it; `images` are parsed here (parseImages). */
export interface AppChatSendInput {
  spaceId: string;
  message: string;
  images?: unknown[] | null;
  thinkingEnabled?: boolean;
  conversationId?: string | null;
}

export const AppChatTexts = {
  threadTaken: 'conversationId is taken by a conversation that is not a thread of this digital human',
  channelThread: 'conversationId names a message channel thread, which only its chat writes to',
} as const;

/** The channel name of threads opened over HTTP (`app:im-session-updated`). */
const HTTP_CHANNEL = 'app-chat';
const LAST_MESSAGE_CHARS = 50;

/**
 * Chat with a digital human (docs/api/digital-humans.md, "Chat"). Each thread is a
 * conversation whose turns are of kind `app-chat`: the default thread `app-chat:<appId>`, or a
 * caller-chosen id, which is a thread of its own. Every turn of a thread records its app in
 * its request, so the threads of an app are found among the active turns.
 */
@Injectable()
export class AppChatService {
  constructor(
    private readonly apps: AppsService,
    private readonly agent: AgentService,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly work: AppWork,
    private readonly bus: EventBus,
  ) {}

  /** Starts (or feeds) a turn in the thread; answers the default thread's id as the spec says. */
  async send(appId: string, input: AppChatSendInput): Promise<{ conversationId: string }> {
    const { spaceId, message } = input;
    const images = parseImages(input.images);
    const app = await this.usable(appId);
    const threadId =
      typeof input.conversationId === 'string' && input.conversationId.trim() !== ''
        ? input.conversationId
        : appChatConversationId(app.id);
    // The HTTP chat never writes into a message channel's thread (docs/api/channels.md).
    if (
      threadId.startsWith(`app-chat:${app.id}:`) &&
      /^[^:]+:(direct|group):/.test(threadId.slice(`app-chat:${app.id}:`.length))
    )
      throw new DomainError('conflict', AppChatTexts.channelThread, ErrorCodes.CHAT_THREAD_TAKEN);
    const space = await this.threadSpace(app, threadId, spaceId);
    await this.conversations.openWithId(space, threadId, {
      title: app.spec.display_name ?? app.spec.name,
      appId: app.id,
    });
    await this.agent.submitMessage({
      kind: 'app-chat',
      space,
      conversationId: threadId,
      message,
      images,
      meta: { appId: app.id },
      request: {
        appId: app.id,
        ...(typeof input.thinkingEnabled === 'boolean' ? { thinkingEnabled: input.thinkingEnabled } : {}),
      },
    });
    await this.bus.publish(AppChannels.imSessionUpdated, threadUpdated(app.id, threadId, message));
    return { conversationId: appChatConversationId(app.id) };
  }

  /** Generating in any of the app's threads. */
  async status(appId: string): Promise<{ isGenerating: boolean; conversationId: string }> {
    const app = await this.apps.get(appId);
    return {
      isGenerating: (await this.work.activeThreads(app.id, 'app-chat')).length > 0,
      conversationId: appChatConversationId(app.id),
    };
  }

  /** Stops every thread of the app; answers how many were generating. */
  async stop(appId: string): Promise<number> {
    const app = await this.apps.get(appId);
    return this.work.stopThreads(app.id, 'app-chat');
  }

  /** The default thread's messages; none yet (or no place for them) is an empty list. */
  async messages(appId: string): Promise<Message[]> {
    const app = await this.apps.get(appId);
    const thread = await this.conversations.findById(appChatConversationId(app.id));
    if (!thread) return [];
    return (await this.conversations.get(thread.spaceId, thread.id)).messages;
  }

  /** Stops the default thread and deletes it; the next message starts a fresh one. */
  async clear(appId: string): Promise<void> {
    const app = await this.apps.get(appId);
    const id = appChatConversationId(app.id);
    await this.agent.stop(id);
    const thread = await this.conversations.findById(id);
    if (thread) await this.conversations.remove(thread.spaceId, id).catch(() => undefined);
  }

  /** Ends every live session of the app (history is kept). */
  async restart(appId: string): Promise<{ sessionsClosed: number }> {
    return { sessionsClosed: await this.stop(appId) };
  }

  async sessionState(appId: string): Promise<AppChatSessionStateDto> {
    const app = await this.apps.get(appId);
    const session = await this.agent.session(appChatConversationId(app.id));
    return { isActive: session.active, thoughts: session.thoughts, spaceId: session.spaceId ?? app.spaceId };
  }

  private async usable(appId: string): Promise<App> {
    const app = await this.apps.get(appId);
    if (app.status === 'uninstalled')
      throw new DomainError('conflict', AppErrors.uninstalled, ErrorCodes.APP_UNINSTALLED);
    return app;
  }

  /**
   * Where a thread lives: where it already is; else the app's own space; a global app's new
   * thread lives in the space the caller named.
   */
  private async threadSpace(app: App, threadId: string, requested: string): Promise<Space> {
    const existing = await this.conversations.findById(threadId);
    if (existing && existing.appId !== app.id)
      throw new DomainError('conflict', AppChatTexts.threadTaken, ErrorCodes.CHAT_THREAD_TAKEN);
    if (existing) return this.spaces.get(existing.spaceId);
    return this.spaces.get(app.spaceId ?? requested);
  }
}

/** `app:im-session-updated` for a thread opened over HTTP that got a message (the user's or the reply). */
export function threadUpdated(appId: string, threadId: string, message: string): AppImSessionUpdatedEvent {
  return {
    appId,
    channel: HTTP_CHANNEL,
    chatId: threadId,
    chatType: 'direct',
    instanceId: null,
    lastMessage: message.slice(0, LAST_MESSAGE_CHARS),
  };
}
