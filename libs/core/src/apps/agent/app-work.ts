import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentService } from '../../agent/agent.service.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { TurnRepository } from '../../ports/turn.repository.port.js';
import { AppLifecycle, type AppLifecycleListener } from '../app-lifecycle.js';

/**
 * A digital human's turns and threads when it is uninstalled or deleted: every active turn
 * of its chat threads and runs is stopped through the agent's stop (a flag on the turn record
 * and a message to the replica running it, so it works from any replica), and a permanent
 * delete removes its threads (`app-chat:<appId>`, caller-chosen threads, the run conversation).
 */
@Injectable()
export class AppWork implements AppLifecycleListener, OnModuleInit {
  constructor(
    private readonly lifecycle: AppLifecycle,
    private readonly agent: AgentService,
    private readonly turns: TurnRepository,
    private readonly conversations: ConversationsService,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  /** Stops every active turn of the app, chat threads and runs. */
  async stopWork(appId: string): Promise<void> {
    await this.stopThreads(appId);
  }

  /** Stops the app's active turns (of one kind, or all); answers how many conversations had one. */
  async stopThreads(appId: string, kind?: 'app-chat' | 'app-run'): Promise<number> {
    const threads = await this.activeThreads(appId, kind);
    for (const conversationId of threads) await this.agent.stop(conversationId);
    return threads.length;
  }

  async removeAll(appId: string): Promise<void> {
    await this.conversations.removeAllOfApp(appId);
  }

  /** Conversations where a turn of the app (chat or run) is queued or running. */
  async activeThreads(appId: string, kind?: 'app-chat' | 'app-run'): Promise<string[]> {
    const active = await this.turns.listActive();
    return [
      ...new Set(
        active
          .filter((t) => (kind ? t.kind === kind : t.kind !== 'chat') && t.request.appId === appId)
          .map((t) => t.conversationId),
      ),
    ];
  }
}
