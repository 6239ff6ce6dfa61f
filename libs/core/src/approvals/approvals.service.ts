import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  AgentInternalChannels,
  type ApprovalChannelUser,
  type ApprovalDecider,
  type ApprovalPolicy,
  type ApprovalRecord,
} from '#contracts/agent.js';
import { ErrorCodes } from '#contracts/errors.js';
import { DomainError } from '../errors/domain-error.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import type { App } from '../kernel/app.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { ConversationRepository } from '../ports/conversation.repository.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { Metrics } from '../ports/metrics.port.js';
import { type PendingApproval, type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import {
  APPROVALS_KEY,
  effectivePolicy,
  isActivePolicy,
  parseApprovalPolicy,
  RejectionReasons,
} from './approval-policy.js';

export const ApprovalTexts = {
  nothingWaits: 'No tool call is waiting for approval',
  conversationRequired: 'conversationId is required and must be a string',
} as const;

/** What another context does when a call is held and when it is decided (a digital human's run waits as `waiting_user`). */
export interface ApprovalWatcher {
  held(turn: TurnRecord, pending: PendingApproval): Promise<void>;
  decided(turn: TurnRecord, pending: PendingApproval, record: ApprovalRecord): Promise<void>;
}

/** An answer as the request gave it: its fields are judged here (only once a policy is in force). */
export interface ApprovalAnswer {
  conversationId?: unknown;
  toolId?: unknown;
  approved: boolean;
  reason?: unknown;
  by: Exclude<ApprovalDecider, 'server'>;
  /** With `by: "channel"`: the platform user who answered in a chat thread. */
  channelUser?: ApprovalChannelUser;
}

/** A held call that nobody has decided yet, as a chat thread offers it. */
export interface WaitingApproval {
  conversationId: string;
  turnId: string;
  pending: PendingApproval;
  /** Short and stable for this call (a button's payload names it): see approvalKey. */
  key: string;
}

/** Prefixes of the conversations a digital human owns by id (its main chat thread, its runs). */
const APP_CONVERSATION = /^app-(?:chat|run):(.+)$/;

/**
 * Tool approvals (docs/api/agent.md, "Tool approvals"): which policy a turn runs under, the
 * answers of `POST /api/agent/approve` and `/reject` (recorded once in the turn record, from
 * any replica, then the replica running the turn is woken), and the audit of every decision
 * (a metric by outcome; watchers such as the digital humans' runs). The wait itself is a step of
 * the agent loop (TurnRunner holds the call like an AskUserQuestion).
 */
@Injectable()
export class ApprovalsService implements OnModuleInit {
  private readonly logger = new Logger('Approvals');
  private readonly watchers: ApprovalWatcher[] = [];

  constructor(
    private readonly models: ModelSourcesService,
    private readonly apps: AppRepository,
    private readonly conversations: ConversationRepository,
    private readonly turns: TurnRepository,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    // `approvals` in POST /api/config is checked before anything is written (400 naming the field).
    this.models.checkBranch(APPROVALS_KEY, (next) => void parseApprovalPolicy(next));
  }

  watch(watcher: ApprovalWatcher): void {
    this.watchers.push(watcher);
  }

  /**
   * The policy a turn runs under: its digital human's, else the configuration's; null when none
   * holds anything. `known`: that digital human as the turn's plan read it (not read again).
   */
  async policyForTurn(
    turn: Pick<TurnRecord, 'kind' | 'conversationId' | 'request'>,
    known?: App,
  ): Promise<ApprovalPolicy | null> {
    const appId =
      turn.kind !== 'chat' && typeof turn.request.appId === 'string'
        ? turn.request.appId
        : appOfId(turn.conversationId);
    return this.policyOf(appId, known?.id === appId ? known : undefined);
  }

  /** The policy an answer about `conversationId` meets (the active turn's, else the conversation's owner's). */
  async policyForConversation(conversationId: string): Promise<ApprovalPolicy | null> {
    const active = await this.turns.findActive(conversationId);
    if (active) return this.policyForTurn(active);
    const appId =
      appOfId(conversationId) ?? (await this.conversations.findById(conversationId).catch(() => null))?.appId ?? null;
    return this.policyOf(appId);
  }

  /**
   * `POST /api/agent/approve` / `reject`. Records the answer for the waiting call of the
   * conversation (of `toolId` when given) and wakes the turn. Without any policy it is the
   * specification's no-op; with one and nothing waiting it is a 409.
   */
  async answer(input: ApprovalAnswer): Promise<boolean> {
    const conversationId = typeof input.conversationId === 'string' ? input.conversationId : '';
    if (conversationId === '') {
      if (isActivePolicy(await this.configuredPolicy())) throw DomainError.invalid(ApprovalTexts.conversationRequired);
      return false;
    }
    const toolId = optionalText(input.toolId);
    const reason = optionalText(input.reason);
    if (toolId === false || reason === false) {
      // Judged only once a policy is in force: without one any body is the specification's no-op.
      if (!isActivePolicy(await this.policyForConversation(conversationId))) return false;
      throw DomainError.invalid(`${toolId === false ? 'toolId' : 'reason'} must be a string`);
    }
    const decided = await this.turns.decideApproval(conversationId, toolId ?? null, {
      approved: input.approved,
      by: input.by,
      ...(input.channelUser ? { channelUser: input.channelUser } : {}),
      at: new Date(this.clock.now()).toISOString(),
      ...(!input.approved ? { reason: reason?.slice(0, 2_000) ?? RejectionReasons.none } : {}),
    });
    if (decided) {
      await this.bus.publish(AgentInternalChannels.answer, { turnId: decided.id });
      return true;
    }
    if (isActivePolicy(await this.policyForConversation(conversationId)))
      throw new DomainError('conflict', ApprovalTexts.nothingWaits, ErrorCodes.NO_APPROVAL_PENDING);
    return false;
  }

  /** The call the conversation's active turn holds and nobody has decided yet; null when none. */
  async waiting(conversationId: string): Promise<WaitingApproval | null> {
    const turn = await this.turns.findActive(conversationId).catch(() => null);
    if (!turn?.pendingApproval || turn.approvalDecision || turn.stopRequested) return null;
    return {
      conversationId,
      turnId: turn.id,
      pending: turn.pendingApproval,
      key: approvalKey(turn.id, turn.pendingApproval.toolId),
    };
  }

  /** A call was held: watchers hear of it (a failing watcher does not fail the turn). */
  async held(turn: TurnRecord, pending: PendingApproval): Promise<void> {
    for (const watcher of this.watchers) {
      await watcher.held(turn, pending).catch((err: Error) => this.logger.warn(`approval watcher: ${err.message}`));
    }
  }

  /** A held call was decided: counted by outcome, and watchers record it. */
  async decided(turn: TurnRecord, pending: PendingApproval, record: ApprovalRecord): Promise<void> {
    if (record.outcome) this.metrics.toolApproval(record.outcome);
    this.logger.log('tool call decided', {
      turnId: turn.id,
      conversationId: turn.conversationId,
      tool: pending.name,
      toolId: pending.toolId,
      outcome: record.outcome,
      by: record.decidedBy,
      ...(record.channelUser ? { channel: record.channelUser.channel, channelUserId: record.channelUser.userId } : {}),
    });
    for (const watcher of this.watchers) {
      await watcher
        .decided(turn, pending, record)
        .catch((err: Error) => this.logger.warn(`approval watcher: ${err.message}`));
    }
  }

  private async policyOf(appId: string | null, known?: App): Promise<ApprovalPolicy | null> {
    // Side by side: every turn's start reads both.
    const [configured, app] = await Promise.all([
      this.models.storedBranch(APPROVALS_KEY),
      known ?? (appId ? this.apps.findById(appId).catch(() => null) : null),
    ]);
    const policy = effectivePolicy(app?.userOverrides[APPROVALS_KEY], configured);
    return isActivePolicy(policy) ? policy : null;
  }

  private async configuredPolicy(): Promise<ApprovalPolicy | null> {
    return effectivePolicy(undefined, await this.models.storedBranch(APPROVALS_KEY));
  }
}

/** A string field, trimmed; undefined when absent, null or blank; false when it is not a string. */
function optionalText(value: unknown): string | undefined | false {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return false;
  return value.trim() === '' ? undefined : value.trim();
}

/**
 * A held call's short name: 16 hex characters of a hash of its turn and tool id, so a chat
 * platform's button payload (Telegram allows 64 bytes) names exactly this call and a press after
 * it was decided, or on another call, matches nothing.
 */
export function approvalKey(turnId: string, toolId: string): string {
  return createHash('sha256').update(`${turnId}\u0000${toolId}`).digest('hex').slice(0, 16);
}

function appOfId(conversationId: string): string | null {
  return APP_CONVERSATION.exec(conversationId)?.[1] ?? null;
}
