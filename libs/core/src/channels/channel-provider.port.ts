import type { ChannelConfigField, ChannelProviderDto, ChannelState, ChatType } from '#contracts/channels.js';
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
  | { kind: 'accepted'; messages: InboundMessage[]; response?: unknown };

/** What a connection hands back to the channels context while its lease is held. */
export interface ConnectionSink {
  /** A message came in: claimed (once per platform message id) and queued. */
  receive(message: InboundMessage): Promise<void>;
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

  /** Webhook-style: checks the request's signature and reads its messages. */
  parseWebhook?(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse>;
  /**
   * Connection-style: called on the replica that holds the instance's lease; the connection
   * runs until `stop` (or `sink.signal` aborts).
   */
  connect?(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection>;
  /** Sends one message (at most maxMessageLength characters). Throws ChannelError. */
  abstract send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string): Promise<void>;
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
