import type { ChannelTurnOrigin } from '#contracts/channels.js';
import type { Message } from '../kernel/conversation.js';

/** A digital human as a channel reads it (once per message). */
export interface ChannelApp {
  id: string;
  /** Its display name. */
  name: string;
  /** Its space; null when installed for every workspace. */
  spaceId: string | null;
}

/** A message of a channel thread, to run as a turn of the digital human's chat. */
export interface ChannelTurnInput {
  /** The digital human as read for this message: submit does not read it again. */
  app: ChannelApp;
  threadId: string;
  message: string;
  /** Images handed to the turn as the web app's are (base64 with their media type). */
  images: Array<{ mediaType: string; data: string }>;
  origin: ChannelTurnOrigin;
  /** A guest (not an owner) under `chat-only`: no tool that writes or runs. */
  guest: boolean;
  title: string;
  /**
   * The message record's id, derived from the instance and the platform's message id: a message
   * submitted again (its dispatch job run again after its replica died) is not stored twice.
   */
  messageId: string;
}

/** A channel thread's turn ended with this reply. */
export interface ChannelReply {
  appId: string;
  conversationId: string;
  turnId: string;
  origin: ChannelTurnOrigin;
  reply: string;
}

/** A digital human's run reported its result (`output`, or `complete`). */
export interface RunResult {
  appId: string;
  runId: string;
  type: 'output' | 'complete';
  summary: string;
}

/** A digital human's run asked its owner a question (an escalation, with its choices). */
export interface EscalationAsked {
  appId: string;
  entryId: string;
  question: string;
  choices: string[];
}

/** An open question of a digital human, as a channel thread may answer it. */
export interface OpenEscalation {
  entryId: string;
  question: string;
  choices: string[];
}

export interface ChannelChatListener {
  replied(reply: ChannelReply): Promise<void>;
  runResult(result: RunResult): Promise<void>;
  /** An escalation opened (on the replica whose run asked it). */
  escalated?(asked: EscalationAsked): Promise<void>;
}

/**
 * What message channels need of digital humans' chat (docs/api/channels.md): the digital-human
 * context registers it, so channels start app-chat turns without the two contexts importing
 * each other in a circle. Replies and run results come back through a listener.
 */
export abstract class ChannelChat {
  /** The app; null when it does not exist or is uninstalled. */
  abstract app(appId: string): Promise<ChannelApp | null>;
  /** The app exists (installed or not). */
  abstract appExists(appId: string): Promise<boolean>;
  /**
   * Records the message and starts a turn, or hands it to the running turn ('merged');
   * 'duplicate' (nothing done) when a message of `messageId` is recorded already.
   */
  abstract submit(input: ChannelTurnInput): Promise<'started' | 'merged' | 'duplicate'>;
  abstract stop(threadId: string): Promise<void>;
  /** Stops the thread and deletes it; the next message starts afresh. */
  abstract clear(threadId: string): Promise<void>;
  abstract messages(threadId: string): Promise<Message[]>;
  abstract listen(listener: ChannelChatListener): void;
  /** The app's open question, or null. */
  abstract openEscalation(appId: string): Promise<OpenEscalation | null>;
  /** Answers the open question `entryId` (as `POST …/escalation/:entryId/respond` does); false when it is no longer open. */
  abstract answerEscalation(
    appId: string,
    entryId: string,
    answer: { choice?: string; text?: string },
  ): Promise<boolean>;
}
