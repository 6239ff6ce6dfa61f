import { Injectable } from '@nestjs/common';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import type { ToolsetEntry } from '#contracts/agent.js';
import { DomainError } from '../errors/domain-error.js';
import { SettingsRepository } from '../ports/settings.repository.port.js';
import { ConversationEvents } from './conversation-events.js';

/** The toolsets a conversation opens and closes (the others are always on). */
export const OPENABLE_TOOLSETS: readonly ToolsetEntry[] = [
  {
    id: AI_BROWSER_SERVER,
    displayName: 'AI browser',
    summary: 'Open web pages in a headless browser, read them and act on them (sign-ins kept per space)',
    open: false,
  },
];

const key = (conversationId: string) => `conversation-toolsets:${conversationId}`;

/**
 * Which openable toolsets each conversation has open (closed until opened): opened and closed by
 * `toolsets/open|close` or by a message's `aiBrowserEnabled`, read by each chat turn. Kept with
 * the server's settings, so every replica sees the same.
 */
@Injectable()
export class ConversationToolsets {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly events: ConversationEvents,
  ) {}

  async openOf(conversationId: string): Promise<string[]> {
    return (await this.settings.get<string[]>(key(conversationId))) ?? [];
  }

  async isOpen(conversationId: string, toolsetId: string): Promise<boolean> {
    return (await this.openOf(conversationId)).includes(toolsetId);
  }

  /**
   * Opens or closes `toolsetId` for the conversation; announces `toolsets:changed` when that
   * changed something. Answers the toolsets open now.
   */
  async set(
    spaceId: string,
    conversationId: string,
    toolsetId: string,
    open: boolean,
    openedBy: 'user' | 'message',
  ): Promise<string[]> {
    if (!OPENABLE_TOOLSETS.some((t) => t.id === toolsetId)) {
      throw DomainError.invalid(
        `toolsetId must be one of ${OPENABLE_TOOLSETS.map((t) => t.id).join(', ')} (the others are always open)`,
      );
    }
    for (;;) {
      const before = await this.settings.get<string[]>(key(conversationId));
      const current = before ?? [];
      if (current.includes(toolsetId) === open) return current;
      const next = open ? [...current, toolsetId] : current.filter((id) => id !== toolsetId);
      // Two replicas toggling at once: the loser reads again.
      if (!(await this.settings.compareAndSet(key(conversationId), before, next))) continue;
      await this.events.emit(spaceId, conversationId, 'toolsets:changed', {
        toolsetId,
        action: open ? 'open' : 'close',
        openedBy,
        open: next,
      });
      return next;
    }
  }
}
