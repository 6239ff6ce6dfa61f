import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ChannelEventChannels } from '#contracts/channels.js';
import { EventBus } from '../ports/event-bus.port.js';
import { type LeaderCampaign, LeaderLease } from '../ports/leader-lease.port.js';
import { type ChannelInstanceRecord, ChannelRepository } from '../ports/channel.repository.port.js';
import { type ChannelConnection, ChannelError, ChannelProviders } from './channel-provider.port.js';
import { ChannelsService } from './channels.service.js';

/** The lease of one instance's connection. */
export const connectionLeaseName = (instanceId: string): string => `channel-connection:${instanceId}`;

interface Held {
  campaign: LeaderCampaign;
  leader: boolean;
  connection: ChannelConnection | null;
  abort: AbortController | null;
  /** The config the connection runs with (a change restarts it). */
  configKey: string;
  /** A start is under way (a `connecting` state it wrote itself is no request to restart). */
  starting: boolean;
  chain: Promise<void>;
  /** Failed starts in a row (a platform down): the next try waits longer. */
  failures: number;
  retry: ReturnType<typeof setTimeout> | null;
}

/** Waits before another start after a failure that may pass (then it stays at the last). */
export const CONNECT_RETRY_MS = [2_000, 5_000, 10_000, 30_000];

/**
 * Connection-style transports (docs/api/channels.md, "Replicas"): long polling, sockets, IMAP
 * IDLE. Every replica campaigns for each enabled connection-style instance's lease; the one
 * that holds it keeps the connection (taken over within about a second on Redis when the
 * holder's process dies, within the lease's lifetime, about 13 s, when it hangs), turns each
 * message into a claimed job, and reports the state.
 * Changes made on any replica arrive as `im-channels:instance-updated` and are reconciled here;
 * `reconnect` (state `connecting`) restarts the held connection.
 */
@Injectable()
export class ChannelConnections implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ChannelConnections');
  private readonly held = new Map<string, Held>();
  private unsubscribe: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly records: ChannelRepository,
    private readonly providers: ChannelProviders,
    private readonly channels: ChannelsService,
    private readonly lease: LeaderLease,
    private readonly bus: EventBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.channels.watch({ changed: (id, reconnect) => this.reconcile(id, reconnect) });
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel === ChannelEventChannels.instanceUpdated && typeof event.data.instanceId === 'string')
        void this.reconcile(event.data.instanceId, event.data.reconnect === true);
    });
    const all = await this.records.listInstances().catch(() => []);
    for (const instance of all) await this.reconcile(instance.id);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const [id, held] of this.held) {
      await this.stopConnection(held);
      await held.campaign.stop().catch(() => undefined);
      this.held.delete(id);
    }
  }

  /** Whether this replica holds the instance's connection (tests, status). */
  holds(instanceId: string): boolean {
    return this.held.get(instanceId)?.leader === true;
  }

  /**
   * Brings this replica's campaign and connection for the instance in line with its record: a
   * changed configuration, or an explicit reconnect request, restarts a held connection. (The
   * `connecting` state alone is not such a request: the connection writes it itself, and a stale
   * read of it would start a second attempt, against a platform that refused the first.)
   */
  async reconcile(instanceId: string, reconnect = false): Promise<void> {
    if (this.stopped) return;
    const record = await this.records.findInstance(instanceId).catch(() => null);
    const provider = record ? this.providers.find(record.type) : null;
    const wanted = record !== null && record.enabled && provider?.connect !== undefined;
    const held = this.held.get(instanceId);
    if (!wanted) {
      if (held) {
        this.held.delete(instanceId);
        await this.stopConnection(held);
        await held.campaign.stop().catch(() => undefined);
      }
      return;
    }
    if (!held) {
      this.campaignFor(record!);
      return;
    }
    if (!held.leader || held.starting) return;
    const restart = configKey(record!) !== held.configKey || reconnect;
    if (restart) this.serially(held, () => this.restart(instanceId, held));
  }

  private campaignFor(record: ChannelInstanceRecord): void {
    const id = record.id;
    const held: Held = {
      campaign: null as unknown as LeaderCampaign,
      leader: false,
      connection: null,
      abort: null,
      configKey: configKey(record),
      starting: false,
      chain: Promise.resolve(),
      failures: 0,
      retry: null,
    };
    this.held.set(id, held);
    held.campaign = this.lease.campaign(connectionLeaseName(id), {
      elected: () => {
        held.leader = true;
        this.serially(held, () => this.restart(id, held));
      },
      deposed: () => {
        held.leader = false;
        this.serially(held, () => this.stopConnection(held));
      },
    });
  }

  private serially(held: Held, step: () => Promise<void>): void {
    held.chain = held.chain.then(step).catch((err: Error) => this.logger.warn(`channel connection: ${err.message}`));
  }

  private async restart(instanceId: string, held: Held): Promise<void> {
    await this.stopConnection(held);
    if (!held.leader || this.stopped) return;
    const record = await this.records.findInstance(instanceId);
    const provider = record ? this.providers.find(record.type) : null;
    if (!record || !record.enabled || !provider?.connect) return;
    held.configKey = configKey(record);
    held.starting = true;
    const abort = new AbortController();
    held.abort = abort;
    try {
      await this.channels.setState(instanceId, 'connecting', null);
      held.connection = await provider.connect(record, {
        receive: async (message) => {
          if (abort.signal.aborted) return;
          await this.channels.accept(instanceId, message, record.appId);
        },
        receiveMany: async (messages) => {
          if (abort.signal.aborted) return;
          await this.channels.acceptMany(instanceId, messages, record.appId);
        },
        action: async (action) => {
          if (abort.signal.aborted) return;
          await this.channels.action(instanceId, action);
        },
        state: async (state, reason) => {
          if (abort.signal.aborted) return;
          await this.channels.setState(instanceId, state, reason ?? null);
        },
        cursor: async () => (await this.records.findInstance(instanceId))?.cursor ?? null,
        setCursor: (cursor) => this.records.setCursor(instanceId, cursor),
        signal: abort.signal,
      });
      held.failures = 0;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.warn(`channel ${instanceId}: could not connect: ${reason}`);
      if (abort.signal.aborted) return;
      await this.channels.setState(instanceId, 'offline', reason);
      // Credentials refused for good: no retry until the instance changes or is reconnected.
      if (err instanceof ChannelError && err.permanent) return;
      const wait = CONNECT_RETRY_MS[Math.min(held.failures, CONNECT_RETRY_MS.length - 1)]!;
      held.failures += 1;
      held.retry = setTimeout(() => {
        held.retry = null;
        if (held.leader && !this.stopped) this.serially(held, () => this.restart(instanceId, held));
      }, wait);
      held.retry.unref?.();
    } finally {
      held.starting = false;
    }
  }

  private async stopConnection(held: Held): Promise<void> {
    if (held.retry) clearTimeout(held.retry);
    held.retry = null;
    held.abort?.abort();
    held.abort = null;
    const connection = held.connection;
    held.connection = null;
    await connection?.stop().catch(() => undefined);
  }
}

function configKey(record: ChannelInstanceRecord): string {
  return JSON.stringify(record.config);
}
