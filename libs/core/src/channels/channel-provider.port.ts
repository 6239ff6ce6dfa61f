import type {
  ChannelChoice,
  ChannelConfigField,
  ChannelProviderDto,
  ChannelState,
  ChatType,
} from '#contracts/channels.js';
import type { ChannelInboundJob } from '#contracts/jobs.js';
import type { ChannelInstanceRecord } from '../ports/channel.repository.port.js';

/** A platform message as a provider normalised it. */
export type InboundMessage = ChannelInboundJob;

/** Where a reply goes. */
export interface OutboundTarget {
  chatId: string;
  chatType: ChatType;
  /** The platform message answered; null for a push of the digital human's own. */
  replyTo: string | null;
  /**
   * This outbound message's id (its reply's key and part): the same when a replica that died
   * mid-reply is followed by a resend, so a platform or receiver that keeps ids can drop the repeat.
   */
  deliveryId?: string;
}

/**
 * A button offered under an outbound message (Telegram inline keyboard, Slack block actions):
 * `{id, label, style?}`; `id` comes back as InboundAction.choiceId when it is pressed.
 */
export type MessageChoice = ChannelChoice;

/** What an outbound message may carry beyond its text (every field optional). */
export interface OutboundOptions {
  /**
   * Buttons under the message. Passed only to a provider whose `supportsChoices` is true; for the
   * others the caller writes in the text what to reply instead (tool approvals: `approve` / `reject`).
   */
  choices?: readonly MessageChoice[];
}

/**
 * A press of a button of an earlier message (Telegram `callback_query`, Slack `block_actions`),
 * as a provider normalised it. Handled at once (not queued): the platform wants its answer soon.
 */
export interface InboundAction {
  /** The platform's id of this press (Telegram's callback query id): claimed once per instance. */
  actionId: string;
  /** The pressed MessageChoice's id. */
  choiceId: string;
  chatId: string;
  chatType: ChatType;
  from: { id: string; name?: string };
  /** Where the message carrying the buttons is, for settleAction (Telegram: `<chat id>:<message_id>`). */
  messageRef: string | null;
  /** That message's text, where the platform sends it along (to write the outcome under it). */
  messageText?: string;
}

/**
 * How a press ended, for settleAction: `notice` is shown to whoever pressed (Telegram's
 * answerCallbackQuery text); `text`, when set, replaces the message that carried the buttons and
 * removes them (the decision is shown in the chat).
 */
export interface ActionOutcome {
  notice: string;
  text?: string;
}

/**
 * A send or connection failure. `permanent`: the platform refused the credentials (or the
 * target) for good; the instance goes offline with `message` as its reason and nothing is
 * retried until it is changed or reconnected.
 */
export class ChannelError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'ChannelError';
  }
}

type Headers = Record<string, string | string[] | undefined>;

/** Why a delivery is refused (the controller answers 401, 400 and 404). */
export type ChannelHookRefusal = 'bad-signature' | 'bad-body' | 'unknown-instance';

/** What a provider makes of a request to `POST /hooks/channels/<instanceId>`. */
export type WebhookParse =
  | { kind: 'refused'; refusal: ChannelHookRefusal; error: string }
  /** `response`: the body to answer instead of `{ok: true, received: true}` (a platform's handshake). */
  | { kind: 'accepted'; messages: InboundMessage[]; actions?: InboundAction[]; response?: unknown };

/** What a connection hands back to the channels context while its lease is held. */
export interface ConnectionSink {
  /** A message came in: claimed (once per platform message id) and queued. */
  receive(message: InboundMessage): Promise<void>;
  /** A batch of messages read at once (a poll's answer): as `receive` for each, claimed together. */
  receiveMany(messages: readonly InboundMessage[]): Promise<void>;
  /** A button was pressed: handled once per action id (see InboundAction). */
  action(action: InboundAction): Promise<void>;
  /** The connection's state changed (`online` once connected; `offline` with the reason). */
  state(state: ChannelState, reason?: string | null): Promise<void>;
  /** Where a transport that reads a stream (Telegram's update offset) is, kept across replicas. */
  cursor(): Promise<string | null>;
  setCursor(cursor: string): Promise<void>;
  /** Stops when the connection is to end (the lease was lost, the instance changed). */
  readonly signal: AbortSignal;
}

export interface ChannelConnection {
  stop(): Promise<void>;
}

/**
 * One chat platform (docs/api/channels.md, "Providers"). A provider is either webhook-style
 * (`parseWebhook`: any replica receives) or connection-style (`connect`: exactly one replica
 * holds the connection, under a lease), and any replica sends. The next platform is one more
 * adapter of this class in libs/infra/src/channels/, listed by ChannelProviders.
 */
export abstract class ChannelProvider {
  abstract readonly type: string;
  abstract readonly displayName: string;
  abstract readonly description: string;
  abstract readonly configFields: readonly ChannelConfigField[];
  abstract readonly defaultConfig: Record<string, unknown>;
  /** The platform's longest message; replies are split to it. */
  abstract readonly maxMessageLength: number;
  /**
   * The platform shows buttons under a message (`OutboundOptions.choices`) and reports presses
   * (InboundAction: through `sink.action` or WebhookParse's `actions`); then it also implements
   * `settleAction`. False: choices are never passed to `send`.
   */
  readonly supportsChoices: boolean = false;

  /** Webhook-style: checks the request's signature and reads its messages. */
  parseWebhook?(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse>;
  /**
   * Connection-style: called on the replica that holds the instance's lease; the connection
   * runs until `stop` (or `sink.signal` aborts).
   */
  connect?(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection>;
  /**
   * Sends one message (at most maxMessageLength characters), with `options.choices` as buttons
   * when the provider supportsChoices. Throws ChannelError.
   */
  abstract send(
    instance: ChannelInstanceRecord,
    target: OutboundTarget,
    text: string,
    options?: OutboundOptions,
  ): Promise<void>;
  /**
   * Answers a press (InboundAction) with the outcome's notice and, when `outcome.text` is set,
   * rewrites the message that carried the buttons without them. Providers that supportsChoices.
   */
  settleAction?(instance: ChannelInstanceRecord, action: InboundAction, outcome: ActionOutcome): Promise<void>;
  /** Shows the bot typing, where the platform has it. */
  sendTyping?(instance: ChannelInstanceRecord, target: OutboundTarget): Promise<void>;
  /** A config problem a provider finds beyond required fields (a bad URL), or null. */
  configProblem?(config: Record<string, unknown>): string | null;

  describe(): ChannelProviderDto {
    return {
      type: this.type,
      displayName: this.displayName,
      description: this.description,
      direction: 'bidirectional',
      configFields: [...this.configFields],
      defaultConfig: { ...this.defaultConfig },
    };
  }
}

/** Every provider this server offers (bound in InfraModule). */
export abstract class ChannelProviders {
  abstract all(): readonly ChannelProvider[];
  find(type: string): ChannelProvider | null {
    return this.all().find((p) => p.type === type) ?? null;
  }
}
