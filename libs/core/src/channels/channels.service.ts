import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { ApprovalChannelUser } from '#contracts/agent.js';
import { AppChannels, type AppImSessionUpdatedEvent, appRunConversationId } from '#contracts/apps.js';
import {
  type ChannelChoice,
  ChannelEventChannels,
  type ChannelInstanceDto,
  type ChannelProviderDto,
  type ChannelState,
  type ChannelStatusDto,
  type ChannelTurnOrigin,
  type ChatType,
  channelThreadId,
  type GuestPolicy,
  type ImSessionDto,
  type ReplyScope,
} from '#contracts/channels.js';
import { ErrorCodes } from '#contracts/errors.js';
import type { JobMap } from '#contracts/jobs.js';
import { approvalKey, ApprovalsService, type WaitingApproval } from '../approvals/approvals.service.js';
import { DomainError } from '../errors/domain-error.js';
import { findUnsafeText, jsonDepthExceeds, MAX_JSON_DEPTH } from '../errors/text-rules.js';
import type { Message } from '../kernel/conversation.js';
import { channelInboundJobId, channelReplyJobId } from '../kernel/job-ids.js';
import {
  type ChannelInstanceRecord,
  ChannelRepository,
  type ChannelThreadRecord,
  type InstanceChanges,
} from '../ports/channel.repository.port.js';
import {
  type ChannelApp,
  ChannelChat,
  type ChannelReply,
  type EscalationAsked,
  type RunResult,
} from '../ports/channel-chat.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { FifoSlots } from '../kernel/fifo-slots.js';
import type { PendingApproval, TurnRecord } from '../ports/turn.repository.port.js';
import {
  type ActionOutcome,
  ChannelError,
  type ChannelHookRefusal,
  type ChannelProvider,
  ChannelProviders,
  type InboundAction,
  type InboundMessage,
} from './channel-provider.port.js';
import {
  actionClaimKey,
  approvalChoices,
  approvalPromptText,
  ChannelTexts,
  chatIdProblem,
  decisionLine,
  escalationAnswer,
  escalationClaimKey,
  escalationText,
  GUEST_POLICIES,
  inScope,
  LAST_MESSAGE_CHARS,
  maskConfig,
  mergeConfig,
  messageClaimKey,
  channelMessageRecordId,
  missingConfigField,
  parseApprovalChoice,
  parseApprovalReply,
  parseCommand,
  pushClaimKey,
  REPLY_SCOPES,
  senderRole,
  splitReply,
  stripMentions,
} from './channel-rules.js';

export interface CreateInstanceInput {
  type: string;
  name: string;
  appId: string;
  teamId?: string | null;
  config: Record<string, unknown>;
  replyScope?: string;
  owners?: string[];
  guestPolicy?: string;
  streaming?: boolean;
  enabled?: boolean;
}

export type UpdateInstanceInput = Partial<Omit<CreateInstanceInput, 'type'>>;

export interface ThreadKey {
  appId: string;
  instanceId: string;
  chatId: string;
}

type Headers = Record<string, string | string[] | undefined>;

export type ChannelHookOutcome =
  { accepted: true; response: unknown } | { accepted: false; refusal: ChannelHookRefusal; error: string };

/** Back-off between the attempts to send one part of a reply (then the instance goes offline). */
export const REPLY_RETRY_MS = [250, 1_000, 3_000, 8_000] as const;

/**
 * Channel messages one replica takes from their job to their turn's start at once: enough for
 * each one's reads side by side on the connection pool (10), few enough that a burst's first
 * messages start their turns without waiting for the last ones' work.
 */
const DISPATCHES_AT_ONCE = 4;

/**
 * A dispatch still running after this long (a query or a job store that never answers) gives
 * its slot up: four such would otherwise stop the replica's channel messages for good. It runs
 * on; its job's lock and the message's record id still keep the message to one turn.
 */
export const DISPATCH_SLOT_MAX_MS = 30_000;

/** Something that (re)starts an instance's connection when it changes: the lease keeper. */
export interface InstanceWatcher {
  /** `reconnect`: someone asked for a fresh connection (not just a record change). */
  changed(instanceId: string, reconnect?: boolean): Promise<void>;
}

/**
 * Message channels (docs/api/channels.md): instances, their chats' threads, and the way a
 * platform message becomes a turn of the digital human's chat and its reply goes back. A
 * platform message is claimed once (a row keyed by instance and message id) before its job is
 * queued with an id from the same pair, so it starts at most one turn across replicas; the
 * turn runs through ChannelChat (registered by the digital-human context), whose listener hands
 * replies and run results back here.
 */
@Injectable()
export class ChannelsService implements OnModuleInit {
  private readonly logger = new Logger('Channels');
  /** Instances whose missing app was logged already (once per instance and process). */
  private readonly loggedMissingApp = new Set<string>();
  /** Channel messages dispatched at once on this replica (see `dispatch`). */
  private readonly dispatchSlots = new FifoSlots(DISPATCHES_AT_ONCE);
  private readonly watchers: InstanceWatcher[] = [];

  constructor(
    private readonly records: ChannelRepository,
    private readonly providers: ChannelProviders,
    private readonly chat: ChannelChat,
    private readonly queue: JobQueue,
    private readonly bus: EventBus,
    private readonly approvals: ApprovalsService,
  ) {}

  onModuleInit(): void {
    this.chat.listen({
      replied: (reply) => this.replied(reply),
      runResult: (result) => this.pushRunResult(result),
      escalated: (asked) => this.pushEscalation(asked),
    });
    this.approvals.watch({
      held: (turn, pending) => this.approvalHeld(turn, pending),
      decided: async () => undefined,
    });
  }

  watch(watcher: InstanceWatcher): void {
    this.watchers.push(watcher);
  }

  // ── providers and instances ─────────────────────────────────────────────────────────────

  listProviders(): ChannelProviderDto[] {
    return this.providers.all().map((p) => p.describe());
  }

  async listInstances(): Promise<ChannelInstanceDto[]> {
    return (await this.records.listInstances()).map((r) => this.present(r));
  }

  async getInstance(id: string): Promise<ChannelInstanceDto> {
    return this.present(await this.instance(id));
  }

  async createInstance(input: CreateInstanceInput): Promise<ChannelInstanceDto> {
    const provider = this.provider(input.type);
    const config = { ...provider.defaultConfig, ...input.config };
    this.checkConfig(provider, config);
    if ((await this.chat.app(input.appId)) === null)
      throw DomainError.notFound(`App not found: ${input.appId}`, ErrorCodes.APP_NOT_FOUND);
    const record = await this.records.createInstance({
      id: randomUUID(),
      type: provider.type,
      name: requiredName(input.name),
      enabled: input.enabled ?? true,
      appId: input.appId,
      teamId: input.teamId ?? null,
      config,
      replyScope: replyScopeOf(input.replyScope) ?? 'all',
      owners: ownersOf(input.owners) ?? [],
      guestPolicy: guestPolicyOf(input.guestPolicy) ?? 'chat-only',
      streaming: input.streaming ?? false,
      state: this.initialState(provider, input.enabled ?? true),
      reason: null,
    });
    await this.publishInstance(record);
    await this.notifyWatchers(record.id);
    return this.present(record);
  }

  async updateInstance(id: string, input: UpdateInstanceInput): Promise<ChannelInstanceDto> {
    const current = await this.instance(id);
    const provider = this.provider(current.type);
    const changes: InstanceChanges = {};
    if (input.name !== undefined) changes.name = requiredName(input.name);
    if (input.enabled !== undefined) changes.enabled = input.enabled;
    if (input.appId !== undefined) {
      if ((await this.chat.app(input.appId)) === null)
        throw DomainError.notFound(`App not found: ${input.appId}`, ErrorCodes.APP_NOT_FOUND);
      changes.appId = input.appId;
    }
    if (input.teamId !== undefined) changes.teamId = input.teamId;
    if (input.config !== undefined) {
      changes.config = mergeConfig(current.config, input.config);
      this.checkConfig(provider, changes.config);
    }
    if (input.replyScope !== undefined) changes.replyScope = replyScopeOf(input.replyScope)!;
    if (input.owners !== undefined) changes.owners = ownersOf(input.owners)!;
    if (input.guestPolicy !== undefined) changes.guestPolicy = guestPolicyOf(input.guestPolicy)!;
    if (input.streaming !== undefined) changes.streaming = input.streaming;
    let updated = await this.records.updateInstance(id, changes);
    if (!updated) throw this.instanceNotFound(id);
    if (changes.enabled !== undefined || changes.config !== undefined) {
      // A changed credential or a re-enabled instance gets a fresh start (and a fresh reason).
      const state = this.initialState(provider, updated.enabled);
      updated = (await this.records.setState(id, state, null)) ?? updated;
    }
    await this.publishInstance(updated);
    await this.notifyWatchers(id);
    return this.present(updated);
  }

  async deleteInstance(id: string): Promise<void> {
    if (!(await this.records.deleteInstance(id))) throw this.instanceNotFound(id);
    await this.bus.publish(ChannelEventChannels.instanceUpdated, { instanceId: id, instance: null });
    await this.notifyWatchers(id);
  }

  async status(instanceId?: string): Promise<ChannelStatusDto[]> {
    const all = instanceId ? [await this.instance(instanceId)] : await this.records.listInstances();
    const out: ChannelStatusDto[] = [];
    for (const r of all) {
      out.push({
        id: r.id,
        type: r.type,
        enabled: r.enabled,
        connected: r.enabled && r.state === 'online',
        state: r.state,
        appId: r.appId,
        appName: (await this.chat.app(r.appId))?.name ?? null,
        reason: r.reason,
      });
    }
    return out;
  }

  /** Starts the instance afresh: a webhook instance is online again; a connection reconnects. */
  async reconnect(instanceId: string): Promise<void> {
    const record = await this.instance(instanceId);
    const provider = this.provider(record.type);
    // The request is said explicitly: a connection's own `connecting` state is no request to restart it.
    const changed = await this.records.setState(record.id, this.initialState(provider, record.enabled), null);
    if (changed) await this.publishInstance(changed, true);
    await this.notifyWatchers(record.id, true);
  }

  /** Sets an instance's state (and reason); publishes the change. */
  async setState(instanceId: string, state: ChannelState, reason: string | null): Promise<void> {
    const changed = await this.records.setState(instanceId, state, reason);
    if (changed) await this.publishInstance(changed);
  }

  // ── threads (im-sessions) ───────────────────────────────────────────────────────────────

  async sessions(appId?: string): Promise<ImSessionDto[]> {
    return (await this.records.listThreads(appId)).map(presentThread);
  }

  async setProactive(key: ThreadKey, proactive: boolean): Promise<void> {
    await this.thread(key);
    await this.records.updateThread(key.instanceId, key.chatId, { proactive });
  }

  async setCustomName(key: ThreadKey, name: string): Promise<void> {
    await this.thread(key);
    const trimmed = name.trim();
    await this.records.updateThread(key.instanceId, key.chatId, { customName: trimmed === '' ? null : trimmed });
  }

  async removeSession(key: ThreadKey): Promise<void> {
    await this.thread(key);
    await this.records.removeThread(key.instanceId, key.chatId);
  }

  /** A channel thread's messages; an empty list when the chat has none yet. */
  async threadMessages(appId: string, instanceId?: string, chatType?: string, chatId?: string): Promise<Message[]> {
    await this.appExists(appId);
    if (!instanceId || !chatId) return [];
    const thread = await this.records.findThread(instanceId, chatId);
    if (!thread || thread.appId !== appId || (chatType && thread.chatType !== chatType)) return [];
    return this.chat.messages(thread.conversationId);
  }

  async stopThread(appId: string, instanceId?: string, chatType?: string, chatId?: string): Promise<boolean> {
    const thread = await this.threadOf(appId, instanceId, chatType, chatId);
    if (!thread) return false;
    await this.chat.stop(thread.conversationId);
    return true;
  }

  async clearThread(appId: string, instanceId?: string, chatType?: string, chatId?: string): Promise<void> {
    const thread = await this.threadOf(appId, instanceId, chatType, chatId);
    if (thread) await this.chat.clear(thread.conversationId);
  }

  // ── inbound ─────────────────────────────────────────────────────────────────────────────

  /** `POST /hooks/channels/<instanceId>`: a webhook-style provider checks and reads the request. */
  async receiveWebhook(instanceId: string, raw: Buffer, headers: Headers): Promise<ChannelHookOutcome> {
    const instance = await this.records.findInstance(instanceId).catch(() => null);
    const provider = instance ? this.providers.find(instance.type) : null;
    if (!instance || !provider?.parseWebhook)
      return { accepted: false, refusal: 'unknown-instance', error: ChannelTexts.instanceNotFound(instanceId) };
    const parsed = await provider.parseWebhook(instance, raw, headers);
    if (parsed.kind === 'refused') return { accepted: false, refusal: parsed.refusal, error: parsed.error };
    // The body rules of every JSON request (as for /api and the webhook triggers), once the
    // signature is known good and before anything is claimed: a bounded depth, and no NUL or
    // unpaired surrogate in what would be stored and queued.
    const text = raw.toString('utf8');
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      return { accepted: false, refusal: 'bad-body', error: ChannelTexts.tooDeep(MAX_JSON_DEPTH) };
    }
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      /* the provider read it otherwise; its messages are checked below */
    }
    const unsafe = findUnsafeText(body, 'body') ?? findUnsafeText(parsed.messages, 'message');
    if (unsafe) return { accepted: false, refusal: 'bad-body', error: `${unsafe.field} ${unsafe.reason}` };
    if (instance.enabled) {
      for (const message of parsed.messages) await this.accept(instance.id, message, instance.appId);
      for (const action of parsed.actions ?? []) await this.action(instance.id, action);
    }
    return { accepted: true, response: parsed.response ?? { ok: true, received: true } };
  }

  /**
   * A platform message, from any transport: claimed once per instance and message id, then
   * queued. A repeat (the same id again, from any replica) does nothing.
   */
  async accept(instanceId: string, message: InboundMessage, appId?: string): Promise<boolean> {
    const key = messageClaimKey(instanceId, message.messageId);
    if (!(await this.records.claim(key))) {
      await this.acceptRepeat(instanceId, message, appId);
      return false;
    }
    await this.queueClaimed(instanceId, [message], appId);
    return true;
  }

  /**
   * A connection's batch of messages (a Telegram `getUpdates` answer), as `accept` for each, with
   * the claims and the queued marks written for the whole batch at once: after a takeover a
   * batch holds every chat's message that waited at the platform, and each one's turn waits for
   * the batch's claims (two statements, not two per message side by side).
   */
  async acceptMany(instanceId: string, messages: readonly InboundMessage[], appId?: string): Promise<void> {
    const keys = [...new Set(messages.map((m) => messageClaimKey(instanceId, m.messageId)))];
    const claimed = await this.records.claimMany(keys);
    const first: InboundMessage[] = [];
    const repeats: InboundMessage[] = [];
    for (const m of messages) {
      // A message twice in one batch: its first copy is the claimed one.
      if (claimed.delete(messageClaimKey(instanceId, m.messageId))) first.push(m);
      else repeats.push(m);
    }
    await Promise.all([
      this.queueClaimed(instanceId, first, appId),
      ...repeats.map((m) => this.acceptRepeat(instanceId, m, appId)),
    ]);
  }

  /** Queues messages just claimed, then marks them queued; one not queued is released (the platform's retry is taken). */
  private async queueClaimed(instanceId: string, messages: readonly InboundMessage[], appId?: string): Promise<void> {
    if (messages.length === 0) return;
    // After a first claim the job's id has never been used, so the queue's look-up for a kept
    // failed job of that id (a round trip before the turn can start) is left out.
    const queued = await Promise.allSettled(
      messages.map((message) =>
        this.queue.add('channel.inbound', inboundJob(instanceId, message, appId), {
          jobId: channelInboundJobId(instanceId, message.messageId),
          uniqueId: true,
        }),
      ),
    );
    const failed = messages.filter((_, i) => queued[i]!.status === 'rejected');
    const marks = messages
      .filter((_, i) => queued[i]!.status === 'fulfilled')
      .map((m) => queuedMark(instanceId, m.messageId));
    await Promise.all([
      this.records.claimMany(marks),
      ...failed.map((m) => this.records.release(messageClaimKey(instanceId, m.messageId))),
    ]);
    const error = queued.find((q): q is PromiseRejectedResult => q.status === 'rejected');
    if (error) throw error.reason;
  }

  /**
   * A message claimed before. The first delivery's replica may have died between its claim and
   * its job (the platform, or a webhook sender, then retries): the job is added again under the
   * same id, a no-op while that job exists, until the message is marked queued.
   */
  private async acceptRepeat(instanceId: string, message: InboundMessage, appId?: string): Promise<void> {
    const mark = queuedMark(instanceId, message.messageId);
    if (await this.records.claimed(mark)) return;
    // A repeat's re-add keeps the queue's look-up for a kept failed job of its id.
    await this.queue.add('channel.inbound', inboundJob(instanceId, message, appId), {
      jobId: channelInboundJobId(instanceId, message.messageId),
      uniqueId: false,
    });
    await this.records.claim(mark);
  }

  /** The queued message: the dispatch rules, then a turn of the chat's thread (or a command). */
  async dispatch(job: JobMap['channel.inbound']): Promise<void> {
    // A burst (the updates a polling takeover piled up, handed to this replica's workers at
    // once) is dispatched first come first served, a few at a time: side by side, every message
    // of it would reach its turn's start only when all of them do.
    const release = await this.dispatchSlots.acquire();
    const overdue = setTimeout(() => {
      this.logger.warn(
        `channel ${job.instanceId}: a message's dispatch has run ${DISPATCH_SLOT_MAX_MS / 1000} s (is the database or the job store answering?): its slot goes to the next message`,
      );
      release();
    }, DISPATCH_SLOT_MAX_MS);
    overdue.unref?.();
    let afterwards: (() => Promise<unknown>) | null;
    try {
      afterwards = await this.dispatchMessage(job);
    } finally {
      clearTimeout(overdue);
      release();
    }
    await afterwards?.();
  }

  /** `dispatch` up to the turn's start; answers what is done after it (null when nothing). */
  private async dispatchMessage(job: JobMap['channel.inbound']): Promise<(() => Promise<unknown>) | null> {
    // The instance and its digital human side by side (the job says which app the instance had
    // when the message came; should it have changed since, the app is read again). Read once
    // for the whole message: the turn's submit is handed what was read.
    const [instance, appAtReceipt] = await Promise.all([
      this.records.findInstance(job.instanceId),
      job.appId === undefined ? undefined : this.chat.app(job.appId),
    ]);
    if (!instance || !instance.enabled) return null;
    const provider = this.providers.find(instance.type);
    if (!provider) return null;
    const m = job.message;
    const app =
      appAtReceipt !== undefined && instance.appId === job.appId ? appAtReceipt : await this.chat.app(instance.appId);
    if (app === null) {
      if (!this.loggedMissingApp.has(instance.id)) {
        this.loggedMissingApp.add(instance.id);
        this.logger.warn(`channel ${instance.id}: a message for a digital human that no longer exists was ignored`);
      }
      return null;
    }
    if (!inScope(instance.replyScope, m.chatType)) return null;
    if (chatIdProblem(m.chatId) !== null) return null;
    let text = m.text;
    if (m.chatType === 'group') {
      if (!m.mentioned) return null;
      text = stripMentions(text);
    }
    if (text.trim() === '' && (m.images ?? []).length === 0) return null;
    const threadId = channelThreadId(instance.appId, instance.type, m.chatType, m.chatId);
    const origin: ChannelTurnOrigin = {
      instanceId: instance.id,
      channel: instance.type,
      chatType: m.chatType,
      chatId: m.chatId,
      replyTo: m.messageId,
    };
    // The thread's record and its live event serve the lists (`GET /api/im-sessions`, the web
    // app), and the typing indicator is a platform call (Telegram's sendChatAction): nothing on
    // the way to the turn needs them, so they are done once it has started (round trips, an
    // event and a platform call off its start, and out of the dispatch slot) and settled before
    // the job ends: a failure fails the job, which runs again (the message's record id keeps
    // that to one turn).
    const receivedAt = new Date();
    const submitted = await this.dispatchToThread(instance, provider, m, text, threadId, origin, app);
    return () =>
      Promise.all([
        this.records.touchThread({
          instanceId: instance.id,
          chatId: m.chatId,
          appId: instance.appId,
          channel: instance.type,
          chatType: m.chatType,
          conversationId: threadId,
          displayName: m.chatName ?? m.from.name ?? m.chatId,
          lastMessageAt: receivedAt,
          peerId: m.chatType === 'direct' ? m.from.id : null,
        }),
        this.publishSession(origin, instance.appId, text),
        submitted
          ? provider
              .sendTyping?.(instance, { chatId: m.chatId, chatType: m.chatType, replyTo: m.messageId })
              .catch(() => undefined)
          : undefined,
      ]);
  }

  /** A message of a known thread: a command, an approval or escalation answer, else a turn. */
  private async dispatchToThread(
    instance: ChannelInstanceRecord,
    provider: ChannelProvider,
    m: InboundMessage,
    text: string,
    threadId: string,
    origin: ChannelTurnOrigin,
    app: ChannelApp,
  ): Promise<boolean> {
    const command = parseCommand(text);
    if (command === 'stop') {
      await this.chat.stop(threadId);
      await this.queueReply(origin, ChannelTexts.stopped, `stop:${instance.id}:${m.messageId}`, provider);
      return false;
    }
    if (command === 'clear') {
      await this.chat.clear(threadId);
      await this.queueReply(origin, ChannelTexts.cleared, `clear:${instance.id}:${m.messageId}`, provider);
      return false;
    }
    let role = senderRole(instance, m.from.id, m.chatType);
    if (role === 'claims-ownership') {
      if (await this.records.claimOwner(instance.id, m.from.id)) {
        role = 'owner';
        const claimed = await this.records.findInstance(instance.id);
        if (claimed) await this.publishInstance(claimed);
      } else {
        const fresh = await this.records.findInstance(instance.id);
        role = senderRole(fresh ?? instance, m.from.id, 'group');
      }
    }
    if (role === 'denied') {
      await this.queueReply(origin, ChannelTexts.denied, `deny:${instance.id}:${m.messageId}`, provider);
      return false;
    }
    const words = parseApprovalReply(text);
    if (words) {
      // `approve` / `reject [reason]` answer a call held for this thread; else it is a message like any other.
      const waiting = await this.waitingFor(instance, m.chatType, m.chatId, null);
      if (waiting) {
        const decided =
          role === 'owner' ? await this.decide(instance, waiting, words.approved, words.reason, m.from) : null;
        const answer =
          role !== 'owner'
            ? ChannelTexts.ownerOnly
            : decided
              ? decisionLine(words.approved, waiting.pending.name, m.from.name ?? m.from.id, words.reason)
              : ChannelTexts.nothingWaits;
        await this.queueReply(origin, answer, `approval-reply:${instance.id}:${m.messageId}`, provider);
        return false;
      }
    }
    if (
      role === 'owner' &&
      m.chatType === 'direct' &&
      (await this.answeredEscalation(instance, m, text, origin, provider))
    )
      return false;
    const message = m.chatType === 'group' ? `[${m.from.name ?? m.from.id}] ${text}` : text;
    const outcome = await this.chat.submit({
      app,
      threadId,
      message,
      images: m.images ?? [],
      origin,
      guest: role === 'guest',
      title: `${app.name} · ${m.chatName ?? m.from.name ?? m.chatId}`,
      // A job run again after its replica died (the queue hands a stalled job on) finds the
      // message recorded under this id, in the same transaction as its turn: 'duplicate'.
      messageId: channelMessageRecordId(instance.id, m.messageId),
    });
    if (outcome === 'merged')
      await this.queueReply(origin, ChannelTexts.merged, `merged:${instance.id}:${m.messageId}`, provider);
    return true;
  }

  // ── tool approvals in a thread (docs/api/channels.md, "Tool approvals in a thread") ──────

  /**
   * A button was pressed (from a connection's sink or a webhook delivery): claimed once per
   * instance and platform action id, decided here, and answered on the platform at once.
   */
  async action(instanceId: string, action: InboundAction): Promise<void> {
    const instance = await this.records.findInstance(instanceId);
    const provider = instance ? this.providers.find(instance.type) : null;
    if (!instance || !provider || !instance.enabled) return;
    if (!(await this.records.claim(actionClaimKey(instanceId, action.actionId)))) return;
    let outcome: ActionOutcome;
    try {
      outcome = await this.decideAction(instance, action);
    } catch (err) {
      this.logger.warn(`channel ${instance.id}: a button press could not be handled: ${(err as Error).message}`);
      outcome = { notice: ChannelTexts.actionFailed };
    }
    await provider
      .settleAction?.(instance, action, outcome)
      .catch((err: Error) =>
        this.logger.warn(`channel ${instance.id}: answering a button press failed: ${err.message}`),
      );
  }

  private async decideAction(instance: ChannelInstanceRecord, action: InboundAction): Promise<ActionOutcome> {
    const choice = parseApprovalChoice(action.choiceId);
    if (!choice) return { notice: ChannelTexts.unknownAction };
    // Only an owner decides (docs/api/channels.md, "Owners and guests"); a guest's press changes nothing.
    if (!instance.owners.includes(action.from.id)) return { notice: ChannelTexts.ownerOnly };
    const waiting = await this.waitingFor(instance, action.chatType, action.chatId, choice.key);
    if (!waiting) return { notice: ChannelTexts.nothingWaits };
    if (!(await this.decide(instance, waiting, choice.approved, undefined, action.from)))
      return { notice: ChannelTexts.nothingWaits };
    const line = decisionLine(choice.approved, waiting.pending.name, action.from.name ?? action.from.id);
    return {
      notice: choice.approved ? ChannelTexts.approvedNotice : ChannelTexts.rejectedNotice,
      text: action.messageText ? `${action.messageText}\n\n${line}` : line,
    };
  }

  /**
   * The undecided call this thread may answer: its own turn's, or (a thread marked proactive,
   * where runs report) the digital human's run's. With `key` (a button), only that very call.
   */
  private async waitingFor(
    instance: ChannelInstanceRecord,
    chatType: ChatType,
    chatId: string,
    key: string | null,
  ): Promise<WaitingApproval | null> {
    const own = await this.approvals.waiting(channelThreadId(instance.appId, instance.type, chatType, chatId));
    if (own && (key === null || own.key === key)) return own;
    if (key === null && !(await this.records.findThread(instance.id, chatId))?.proactive) return null;
    const run = await this.approvals.waiting(appRunConversationId(instance.appId));
    return run && (key === null || run.key === key) ? run : null;
  }

  /** Through the approvals service, as `POST /api/agent/approve|reject`; false when nothing was decided. */
  private async decide(
    instance: ChannelInstanceRecord,
    waiting: WaitingApproval,
    approved: boolean,
    reason: string | undefined,
    from: { id: string; name?: string },
  ): Promise<boolean> {
    const channelUser: ApprovalChannelUser = {
      channel: instance.type,
      instanceId: instance.id,
      userId: from.id,
      ...(from.name ? { name: from.name } : {}),
    };
    try {
      return await this.approvals.answer({
        conversationId: waiting.conversationId,
        toolId: waiting.pending.toolId,
        approved,
        reason,
        by: 'channel',
        channelUser,
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'conflict') return false;
      throw err;
    }
  }

  /**
   * A call was held (on the replica running the turn): a channel thread's turn shows it in that
   * thread, a digital human's run in every thread marked proactive (where its results go), with
   * Approve / Reject buttons where the platform has them, else the words to reply.
   */
  private async approvalHeld(turn: TurnRecord, pending: PendingApproval): Promise<void> {
    const request = turn.request as { appId?: unknown; channel?: ChannelTurnOrigin };
    const targets: ChannelTurnOrigin[] = [];
    let appId: string | null = null;
    if (turn.kind === 'app-chat' && request.channel && typeof request.appId === 'string') {
      appId = request.appId;
      targets.push(request.channel);
    } else if (turn.kind === 'app-run' && typeof request.appId === 'string') {
      appId = request.appId;
      for (const t of await this.records.listThreads(appId)) {
        if (t.proactive)
          targets.push({
            instanceId: t.instanceId,
            channel: t.channel,
            chatType: t.chatType,
            chatId: t.chatId,
            replyTo: '',
          });
      }
    }
    if (appId === null || targets.length === 0) return;
    const appName = (await this.chat.app(appId))?.name ?? appId;
    for (const target of targets) {
      const instance = await this.records.findInstance(target.instanceId);
      const provider = instance ? this.providers.find(instance.type) : null;
      if (!instance || !provider || !instance.enabled) continue;
      const text = approvalPromptText({
        appName,
        toolName: pending.name,
        input: pending.input,
        deadline: pending.deadline,
        words: !provider.supportsChoices,
      });
      const choices = provider.supportsChoices ? approvalChoices(approvalKey(turn.id, pending.toolId)) : undefined;
      await this.queueReply(
        target,
        text,
        `approval:${turn.id}:${pending.toolId}:${instance.id}:${target.chatId}`,
        provider,
        choices,
      );
    }
  }

  // ── outbound ────────────────────────────────────────────────────────────────────────────

  /** A thread's turn replied (on the replica that ran it): the reply is queued once, by turn. */
  private async replied(reply: ChannelReply): Promise<void> {
    const instance = await this.records.findInstance(reply.origin.instanceId);
    const provider = instance ? this.providers.find(instance.type) : null;
    if (!instance || !provider) return;
    const text = reply.reply.trim() === '' ? ChannelTexts.emptyReply : reply.reply;
    await this.queueReply(reply.origin, text, `turn:${reply.turnId}`, provider);
    await this.publishSession(reply.origin, reply.appId, text);
  }

  /** A run's result goes to every thread of the app marked proactive, once per run. */
  private async pushRunResult(result: RunResult): Promise<void> {
    const threads = (await this.records.listThreads(result.appId)).filter((t) => t.proactive);
    for (const thread of threads) {
      const instance = await this.records.findInstance(thread.instanceId);
      const provider = instance ? this.providers.find(instance.type) : null;
      if (!instance || !provider || !instance.enabled) continue;
      if (!(await this.records.claim(pushClaimKey(result.runId, thread.instanceId, thread.chatId)))) continue;
      const origin: ChannelTurnOrigin = {
        instanceId: thread.instanceId,
        channel: thread.channel,
        chatType: thread.chatType,
        chatId: thread.chatId,
        replyTo: '',
      };
      await this.queueReply(
        origin,
        result.summary,
        `push:${result.runId}:${thread.instanceId}:${thread.chatId}`,
        provider,
      );
    }
  }

  /**
   * An escalation goes to each owner's direct chat on the app's enabled instances (the chats
   * whose other party is an owner), once per question and chat; a chat never written from is
   * not known, so an owner who never wrote to the bot gets nothing there.
   */
  private async pushEscalation(asked: EscalationAsked): Promise<void> {
    const instances = (await this.records.listInstances()).filter((i) => i.appId === asked.appId && i.enabled);
    if (instances.length === 0) return;
    const threads = await this.records.listThreads(asked.appId);
    for (const instance of instances) {
      const provider = this.providers.find(instance.type);
      if (!provider) continue;
      const chats = threads.filter(
        (t) =>
          t.instanceId === instance.id &&
          t.chatType === 'direct' &&
          t.peerId !== null &&
          instance.owners.includes(t.peerId),
      );
      for (const thread of chats) {
        if (!(await this.records.claim(escalationClaimKey(asked.entryId, instance.id, thread.chatId)))) continue;
        const origin: ChannelTurnOrigin = {
          instanceId: instance.id,
          channel: thread.channel,
          chatType: 'direct',
          chatId: thread.chatId,
          replyTo: '',
        };
        const text = escalationText(asked.question, asked.choices);
        await this.queueReply(origin, text, `escalation:${asked.entryId}:${instance.id}:${thread.chatId}`, provider);
        await this.publishSession(origin, asked.appId, text);
      }
    }
  }

  /**
   * An owner's direct message while the app waits on a question that was sent to this chat is
   * the answer (a choice by number or words, else free text): recorded as the respond route
   * does, which starts the follow-up run. False when nothing here waits for an answer.
   */
  private async answeredEscalation(
    instance: ChannelInstanceRecord,
    m: InboundMessage,
    text: string,
    origin: ChannelTurnOrigin,
    provider: ChannelProvider,
  ): Promise<boolean> {
    if (text.trim() === '') return false;
    const open = await this.chat.openEscalation(instance.appId);
    if (!open || !(await this.records.claimed(escalationClaimKey(open.entryId, instance.id, m.chatId)))) return false;
    const answer = escalationAnswer(text, open.choices);
    if (!(await this.chat.answerEscalation(instance.appId, open.entryId, answer))) return false;
    const said = 'choice' in answer ? answer.choice : answer.text;
    await this.queueReply(
      origin,
      ChannelTexts.escalationAnswered(said),
      `answered:${instance.id}:${m.messageId}`,
      provider,
    );
    return true;
  }

  private async queueReply(
    origin: ChannelTurnOrigin,
    text: string,
    key: string,
    provider: ChannelProvider,
    choices?: ChannelChoice[],
  ): Promise<void> {
    await this.queue.add(
      'channel.reply',
      {
        instanceId: origin.instanceId,
        chatType: origin.chatType,
        chatId: origin.chatId,
        replyTo: origin.replyTo === '' ? null : origin.replyTo,
        parts: splitReply(text, provider.maxMessageLength),
        ...(choices && choices.length > 0 ? { choices } : {}),
        key,
      },
      { jobId: channelReplyJobId(key) },
    );
  }

  /**
   * Sends a reply's parts in order, each retried with back-off; a platform that refuses for
   * good (credentials) or stays down takes the instance offline with the reason. Each part sent
   * is marked: a job run again after its replica died mid-reply (the queue hands a stalled job to
   * another) sends only the parts not marked. A part is marked after it is sent, so a death
   * between the two repeats that one part rather than lose it.
   */
  async sendReply(job: JobMap['channel.reply'], sleep = defaultSleep): Promise<void> {
    const instance = await this.records.findInstance(job.instanceId);
    const provider = instance ? this.providers.find(instance.type) : null;
    if (!instance || !provider) return;
    const target = { chatId: job.chatId, chatType: job.chatType, replyTo: job.replyTo };
    for (const [i, part] of job.parts.entries()) {
      const sentMark = job.key === undefined ? null : `reply-sent:${job.key}:${i}`;
      if (sentMark !== null && (await this.records.claimed(sentMark))) continue;
      // Buttons go under the last part, and only to a platform that shows them.
      const choices = i === job.parts.length - 1 && provider.supportsChoices ? job.choices : undefined;
      const partTarget = job.key === undefined ? target : { ...target, deliveryId: `${job.key}:${i}` };
      for (let attempt = 0; ; attempt++) {
        try {
          if (choices && choices.length > 0) await provider.send(instance, partTarget, part, { choices });
          else await provider.send(instance, partTarget, part);
          if (instance.state === 'offline' && !provider.connect) await this.setState(instance.id, 'online', null);
          break;
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          const permanent = err instanceof ChannelError && err.permanent;
          if (permanent || attempt >= REPLY_RETRY_MS.length) {
            this.logger.warn(`channel ${instance.id}: a reply could not be sent: ${reason}`);
            await this.setState(instance.id, 'offline', reason);
            return;
          }
          await sleep(REPLY_RETRY_MS[attempt]!);
        }
      }
      if (sentMark !== null) await this.records.claim(sentMark);
    }
  }

  // ── helpers ─────────────────────────────────────────────────────────────────────────────

  present(r: ChannelInstanceRecord): ChannelInstanceDto {
    const provider = this.providers.find(r.type);
    return {
      id: r.id,
      type: r.type,
      name: r.name,
      enabled: r.enabled,
      appId: r.appId,
      teamId: r.teamId,
      config: maskConfig(r.config, provider?.configFields ?? []),
      replyScope: r.replyScope,
      owners: [...r.owners],
      guestPolicy: r.guestPolicy,
      streaming: r.streaming,
      state: r.state,
      reason: r.reason,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    };
  }

  private async publishInstance(r: ChannelInstanceRecord, reconnect = false): Promise<void> {
    await this.bus.publish(ChannelEventChannels.instanceUpdated, {
      instanceId: r.id,
      instance: this.present(r),
      ...(reconnect ? { reconnect: true as const } : {}),
    });
  }

  private async publishSession(origin: ChannelTurnOrigin, appId: string, text: string): Promise<void> {
    await this.bus.publish(AppChannels.imSessionUpdated, {
      appId,
      channel: origin.channel,
      chatId: origin.chatId,
      chatType: origin.chatType,
      instanceId: origin.instanceId,
      lastMessage: text.slice(0, LAST_MESSAGE_CHARS),
    } satisfies AppImSessionUpdatedEvent);
  }

  private async notifyWatchers(instanceId: string, reconnect = false): Promise<void> {
    for (const w of this.watchers) await w.changed(instanceId, reconnect);
  }

  private initialState(provider: ChannelProvider, enabled: boolean): ChannelState {
    if (!enabled) return 'offline';
    return provider.connect ? 'connecting' : 'online';
  }

  private provider(type: string): ChannelProvider {
    const provider = typeof type === 'string' ? this.providers.find(type) : null;
    if (!provider)
      throw DomainError.invalid(
        ChannelTexts.unknownType(
          String(type),
          this.providers.all().map((p) => p.type),
        ),
      );
    return provider;
  }

  private checkConfig(provider: ChannelProvider, config: Record<string, unknown>): void {
    const missing = missingConfigField(config, provider.configFields);
    if (missing !== null) throw DomainError.invalid(ChannelTexts.missingField(missing));
    const problem = provider.configProblem?.(config) ?? null;
    if (problem !== null) throw DomainError.invalid(problem);
  }

  private async instance(id: string): Promise<ChannelInstanceRecord> {
    const record = isUuid(id) ? await this.records.findInstance(id) : null;
    if (!record) throw this.instanceNotFound(id);
    return record;
  }

  private instanceNotFound(id: string): DomainError {
    return DomainError.notFound(ChannelTexts.instanceNotFound(id), ErrorCodes.CHANNEL_INSTANCE_NOT_FOUND);
  }

  private async appExists(appId: string): Promise<void> {
    if (!(await this.chat.appExists(appId)))
      throw DomainError.notFound(`App not found: ${appId}`, ErrorCodes.APP_NOT_FOUND);
  }

  private async thread(key: ThreadKey): Promise<ChannelThreadRecord> {
    const thread = isUuid(key.instanceId) ? await this.records.findThread(key.instanceId, key.chatId) : null;
    if (!thread || thread.appId !== key.appId)
      throw DomainError.notFound(ChannelTexts.sessionNotFound, ErrorCodes.CHANNEL_SESSION_NOT_FOUND);
    return thread;
  }

  private async threadOf(
    appId: string,
    instanceId?: string,
    chatType?: string,
    chatId?: string,
  ): Promise<ChannelThreadRecord | null> {
    await this.appExists(appId);
    if (!instanceId || !chatId || !isUuid(instanceId)) return null;
    const thread = await this.records.findThread(instanceId, chatId);
    if (!thread || thread.appId !== appId || (chatType && thread.chatType !== chatType)) return null;
    return thread;
  }
}

/** The mark that a claimed message's job was queued (a repeat then adds nothing). */
const queuedMark = (instanceId: string, messageId: string): string =>
  `${messageClaimKey(instanceId, messageId)}:queued`;

/** A `channel.inbound` job's data (`appId` only where the receiver knew it). */
function inboundJob(instanceId: string, message: InboundMessage, appId?: string): JobMap['channel.inbound'] {
  return appId === undefined ? { instanceId, message } : { instanceId, message, appId };
}

function presentThread(t: ChannelThreadRecord): ImSessionDto {
  return {
    appId: t.appId,
    channel: t.channel,
    instanceId: t.instanceId,
    chatType: t.chatType,
    chatId: t.chatId,
    displayName: t.displayName,
    customName: t.customName,
    proactive: t.proactive,
    lastMessageAt: t.lastMessageAt?.toISOString() ?? null,
  };
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const isUuid = (id: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

function requiredName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw DomainError.invalid('name must not be empty');
  if (name.length > 200) throw DomainError.invalid('name must be at most 200 characters');
  return name.trim();
}

function replyScopeOf(value: unknown): ReplyScope | undefined {
  if (value === undefined) return undefined;
  if (!REPLY_SCOPES.includes(value as ReplyScope))
    throw DomainError.invalid(`replyScope must be one of ${REPLY_SCOPES.join(', ')}`);
  return value as ReplyScope;
}

function guestPolicyOf(value: unknown): GuestPolicy | undefined {
  if (value === undefined) return undefined;
  if (!GUEST_POLICIES.includes(value as GuestPolicy))
    throw DomainError.invalid(`guestPolicy must be one of ${GUEST_POLICIES.join(', ')}`);
  return value as GuestPolicy;
}

function ownersOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw DomainError.invalid('owners must be a list of platform user ids');
  return [...new Set((value as string[]).map((v) => v.trim()))];
}

export type { ChatType };
