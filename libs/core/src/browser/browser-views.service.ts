import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import {
  type BrowserCommand,
  type BrowserCommandReply,
  BrowserChannels,
  BrowserInternalChannels,
  type BrowserLivePage,
  type BrowserStopResult,
  type BrowserViewerInput,
  type BrowserWatchFrame,
} from '#contracts/browser.js';
import { DomainError } from '../errors/domain-error.js';
import { EventBus } from '../ports/event-bus.port.js';
import { Replica } from '../ports/replica.port.js';
import { AiBrowser, BrowserProfiles, type PageViewer, type PageWatch } from './ai-browser.js';
import { LivePageRegistry, type ReplicaPages } from './live-page-registry.js';

/** How often this replica renews its announcement of the pages it holds. */
export const ANNOUNCE_EVERY_MS = 3_000;
/** How long a command to another replica waits for its answer. */
export const COMMAND_TIMEOUT_MS = 10_000;

export const BrowserViewTexts = {
  pageNotFound: 'Browser page not found',
  viewFailed: 'The live view could not start; connect again',
  unavailable: 'The AI browser is not available on this server',
  noAnswer: 'The replica holding this browser page did not answer',
  replicaGone: 'The replica holding this page is gone',
} as const;

type CommandBody = BrowserCommand extends infer C
  ? C extends BrowserCommand
    ? Omit<C, 'requestId' | 'replica' | 'from'>
    : never
  : never;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The people-facing side of the AI browser across replicas (docs/api/ai-browser.md): lists
 * the live pages of every replica, and sends stop, finish and the live view of a page to the
 * replica that holds it (the page lives where its scope's turn runs). This replica's own pages
 * are the local `AiBrowser`'s; the others' come from the `LivePageRegistry`, and commands for
 * them travel on the event bus's internal channels.
 */
@Injectable()
export class BrowserViewsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('BrowserViews');
  /** Sign-in pages opened here: they are no conversation's, so the engine's list leaves them out. */
  private readonly loginViews = new Map<string, string>();
  private readonly pending = new Map<string, Pending>();
  /** Live views this replica holds for viewers on other replicas, by watch id. */
  private readonly servedWatches = new Map<string, { watch: PageWatch; viewerReplica: string }>();
  /** Viewers here of pages on other replicas, by watch id. */
  private readonly relayedViewers = new Map<string, { viewer: PageViewer; holder: string }>();
  private unsubscribe: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private announceSoon: NodeJS.Timeout | null = null;

  constructor(
    private readonly registry: LivePageRegistry,
    private readonly bus: EventBus,
    private readonly replica: Replica,
    private readonly profiles: BrowserProfiles,
    // Bound by the engine (BrowserService); without it the routes answer no pages and 503 to open one.
    // (`@Inject`: the union type's metadata would name Object, not AiBrowser.)
    @Optional() @Inject(AiBrowser) private readonly browser: AiBrowser | null = null,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      switch (event.channel) {
        case BrowserInternalChannels.command:
          return void this.onCommand(event.data as unknown as BrowserCommand);
        case BrowserInternalChannels.reply:
          return this.onReply(event.data as unknown as BrowserCommandReply);
        case BrowserInternalChannels.watchFrame:
          return this.onWatchFrame(event.data as unknown as BrowserWatchFrame);
        case BrowserChannels.activeViewChanged:
        case BrowserChannels.viewGone:
        case BrowserChannels.conversationReleased:
          // Pages came or went (here or elsewhere): the list others read catches up now, not at the next beat.
          return this.scheduleAnnounce();
      }
    });
    this.timer = setInterval(() => void this.tick(), ANNOUNCE_EVERY_MS);
    this.timer.unref();
    void this.announce();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.announceSoon) clearTimeout(this.announceSoon);
    this.unsubscribe?.();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(BrowserViewTexts.noAnswer));
    }
    this.pending.clear();
    for (const { watch } of this.servedWatches.values()) await watch.close().catch(() => undefined);
    this.servedWatches.clear();
    await this.registry.withdraw(this.replica.id).catch(() => undefined);
  }

  /** `GET /api/browser/pages`: this replica's pages and every other live replica's. */
  async livePages(filter: { spaceId?: string; conversationId?: string }): Promise<BrowserLivePage[]> {
    const local = this.browser ? await this.browser.livePages(filter) : [];
    const others = (await this.registry.all())
      .filter((r) => r.replica !== this.replica.id)
      .flatMap((r) => r.pages)
      .filter(
        (p) =>
          (filter.spaceId === undefined || p.spaceId === filter.spaceId) &&
          (filter.conversationId === undefined || p.conversationId === filter.conversationId),
      );
    return [...local, ...others];
  }

  /** `POST /api/browser/pages/:viewId/stop`. */
  async stopPage(viewId: string, conversationId: string | null): Promise<BrowserStopResult> {
    if (await this.holdsPage(viewId)) return this.browser!.stopPage(viewId, conversationId);
    const holder = await this.findHolder(viewId);
    // No replica lists it: the original's refusal for a page that conversation does not own.
    if (!holder)
      return this.browser ? this.browser.stopPage(viewId, conversationId) : { stopped: false, reason: 'not-owned' };
    return (await this.request(holder, { op: 'stop', viewId, conversationId })) as BrowserStopResult;
  }

  /** `POST /api/browser/login-sessions`: the page opens here, in the space's profile. */
  async openLogin(spaceId: string, url: string): Promise<{ viewId: string }> {
    if (!this.browser) throw new DomainError('unavailable', BrowserViewTexts.unavailable);
    const opened = await this.browser.openLogin(spaceId, url);
    this.loginViews.set(opened.viewId, spaceId);
    await this.announce();
    return opened;
  }

  /** `POST /api/browser/login-sessions/:viewId/finish`: saved and closed by the replica holding it. */
  async finishLogin(viewId: string): Promise<{ saved: true }> {
    if (this.browser && this.loginViews.has(viewId)) return this.finishHere(viewId);
    const holder = await this.holderOf(viewId);
    return (await this.request(holder, { op: 'finish', viewId })) as { saved: true };
  }

  /**
   * The live view of `viewId` (`/ws/browser/:viewId`) wherever it lives: here directly, else
   * relayed through the bus from its holder. Null when no replica holds such a page.
   */
  async watch(viewId: string, viewer: PageViewer): Promise<PageWatch | null> {
    if (this.browser) {
      const local = await this.browser.watch(viewId, viewer);
      if (local) return local;
    }
    const holder = await this.findHolder(viewId);
    if (!holder) return null;
    const watchId = randomUUID();
    this.relayedViewers.set(watchId, { viewer, holder });
    try {
      await this.request(holder, { op: 'watch', viewId, watchId });
    } catch (err) {
      this.relayedViewers.delete(watchId);
      if (err instanceof DomainError && err.kind === 'not_found') return null;
      throw err;
    }
    return {
      input: async (input: BrowserViewerInput) => {
        await this.request(holder, { op: 'input', watchId, input });
      },
      close: async () => {
        if (!this.relayedViewers.delete(watchId)) return;
        await this.request(holder, { op: 'unwatch', watchId }).catch(() => undefined);
      },
    };
  }

  /** Whether `profile` holds cookies for each of `urls`' hosts (or a parent domain of it): a hint only. */
  async signedIn(profile: string, urls: string[]): Promise<boolean[]> {
    const domains = await this.profiles.cookieDomains(profile);
    return urls.map((url) => {
      let host: string;
      try {
        host = new URL(url).hostname.toLowerCase();
      } catch {
        return false;
      }
      return domains.some((d) => host === d || host.endsWith(`.${d}`));
    });
  }

  private async finishHere(viewId: string): Promise<{ saved: true }> {
    const saved = await this.browser!.finishLogin(viewId);
    this.loginViews.delete(viewId);
    this.scheduleAnnounce();
    return saved;
  }

  private async holdsPage(viewId: string): Promise<boolean> {
    if (!this.browser) return false;
    return (await this.browser.livePages({})).some((p) => p.viewId === viewId);
  }

  /** The other replica announcing `viewId`, if any. */
  private async findHolder(viewId: string): Promise<string | null> {
    const holding = (await this.registry.all()).find((r) => r.replica !== this.replica.id && r.views.includes(viewId));
    return holding?.replica ?? null;
  }

  private async holderOf(viewId: string): Promise<string> {
    const holder = await this.findHolder(viewId);
    if (!holder) throw DomainError.notFound(BrowserViewTexts.pageNotFound);
    return holder;
  }

  private async ownHolding(): Promise<ReplicaPages> {
    const pages = this.browser ? await this.browser.livePages({}) : [];
    return {
      replica: this.replica.id,
      pages,
      views: [...new Set([...pages.map((p) => p.viewId), ...this.loginViews.keys()])],
    };
  }

  private async announce(): Promise<void> {
    try {
      await this.registry.announce(await this.ownHolding());
    } catch (err) {
      this.logger.warn(`browser pages could not be announced: ${(err as Error).message}`);
    }
  }

  private scheduleAnnounce(): void {
    if (this.announceSoon) return;
    this.announceSoon = setTimeout(() => {
      this.announceSoon = null;
      void this.announce();
    }, 50);
    this.announceSoon.unref();
  }

  /** The heartbeat: renew the lease, and end relayed views whose other end's replica is gone. */
  private async tick(): Promise<void> {
    await this.announce();
    if (this.servedWatches.size === 0 && this.relayedViewers.size === 0) return;
    const alive = new Set((await this.registry.all().catch(() => null))?.map((r) => r.replica) ?? []);
    if (alive.size === 0) return;
    for (const [watchId, served] of this.servedWatches) {
      if (alive.has(served.viewerReplica)) continue;
      this.servedWatches.delete(watchId);
      await served.watch.close().catch(() => undefined);
    }
    for (const [watchId, relayed] of this.relayedViewers) {
      if (alive.has(relayed.holder)) continue;
      this.relayedViewers.delete(watchId);
      relayed.viewer.ended(BrowserViewTexts.replicaGone);
    }
  }

  private request(replica: string, body: CommandBody): Promise<unknown> {
    const requestId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new DomainError('unavailable', BrowserViewTexts.noAnswer));
      }, COMMAND_TIMEOUT_MS);
      timer.unref();
      this.pending.set(requestId, { resolve, reject, timer });
      const command = { ...body, requestId, replica, from: this.replica.id } as BrowserCommand;
      this.bus.publish(BrowserInternalChannels.command, command).catch((err: Error) => {
        clearTimeout(timer);
        this.pending.delete(requestId);
        reject(err);
      });
    });
  }

  private onReply(reply: BrowserCommandReply): void {
    if (reply.replica !== this.replica.id) return;
    const pending = this.pending.get(reply.requestId);
    if (!pending) return;
    this.pending.delete(reply.requestId);
    clearTimeout(pending.timer);
    if (!reply.error) return pending.resolve(reply.result);
    pending.reject(
      reply.error.notFound
        ? DomainError.notFound(reply.error.message)
        : new DomainError('unavailable', reply.error.message),
    );
  }

  /** A command for this replica: carried out, answered to its sender. */
  private async onCommand(command: BrowserCommand): Promise<void> {
    if (command.replica !== this.replica.id) return;
    const reply: BrowserCommandReply = { requestId: command.requestId, replica: command.from };
    try {
      reply.result = await this.carryOut(command);
    } catch (err) {
      const notFound = err instanceof DomainError && err.kind === 'not_found';
      reply.error = { message: (err as Error).message, ...(notFound ? { notFound } : {}) };
    }
    await this.bus.publish(BrowserInternalChannels.reply, reply).catch((err: Error) => {
      this.logger.warn(`browser command reply failed: ${err.message}`);
    });
  }

  private async carryOut(command: BrowserCommand): Promise<unknown> {
    const notHere = (): never => {
      throw DomainError.notFound(BrowserViewTexts.pageNotFound);
    };
    switch (command.op) {
      case 'stop':
        if (!(await this.holdsPage(command.viewId))) notHere();
        return this.browser!.stopPage(command.viewId, command.conversationId);
      case 'finish':
        if (!this.browser || !this.loginViews.has(command.viewId)) notHere();
        return this.finishHere(command.viewId);
      case 'watch': {
        const { watchId, from } = command;
        const send = (frame: Omit<BrowserWatchFrame, 'watchId' | 'replica'>): void =>
          void this.bus.publish(BrowserInternalChannels.watchFrame, { watchId, replica: from, ...frame }).catch(() => {
            /* the viewer's replica notices at the next beat */
          });
        const watch = this.browser
          ? await this.browser.watch(command.viewId, {
              frame: (frame) => send({ frame }),
              ended: (reason) => {
                this.servedWatches.delete(watchId);
                send({ ended: reason });
              },
            })
          : null;
        if (!watch) return notHere();
        this.servedWatches.set(watchId, { watch, viewerReplica: from });
        return true;
      }
      case 'input': {
        const served = this.servedWatches.get(command.watchId) ?? notHere();
        await served.watch.input(command.input);
        return true;
      }
      case 'unwatch': {
        const served = this.servedWatches.get(command.watchId);
        this.servedWatches.delete(command.watchId);
        await served?.watch.close();
        return true;
      }
    }
  }

  private onWatchFrame(message: BrowserWatchFrame): void {
    if (message.replica !== this.replica.id) return;
    const relayed = this.relayedViewers.get(message.watchId);
    if (!relayed) return;
    if (message.frame) relayed.viewer.frame(message.frame);
    if (message.ended !== undefined) {
      this.relayedViewers.delete(message.watchId);
      relayed.viewer.ended(message.ended);
    }
  }
}
