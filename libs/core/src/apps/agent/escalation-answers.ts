import { Injectable } from '@nestjs/common';
import type { EscalationResponse } from '#contracts/apps.js';

/** A person's answer to a digital human's question, with what the question's entry recorded. */
export interface AnsweredEscalation {
  appId: string;
  entryId: string;
  question: string | null;
  /** The escalation entry's content (a team member's carries `teamId` and `epochId`). */
  content: Record<string, unknown>;
  response: EscalationResponse;
}

/** Where the answer went instead of a new run: the run id and conversation that carry on. */
export interface ResumedWork {
  runId: string;
  conversationId: string;
}

export type EscalationAnswerHandler = (answered: AnsweredEscalation) => Promise<ResumedWork | null>;

/**
 * Who else resumes on an answer: a context whose work asked the question (a team member)
 * registers a handler; the first to take the answer resumes its work, else the answer starts
 * a run as always (docs/api/digital-humans.md, "Escalations"). A registration, so the
 * digital-human context imports none of them.
 */
@Injectable()
export class EscalationAnswers {
  private readonly handlers: EscalationAnswerHandler[] = [];

  register(handler: EscalationAnswerHandler): void {
    this.handlers.push(handler);
  }

  async route(answered: AnsweredEscalation): Promise<ResumedWork | null> {
    for (const handler of this.handlers) {
      const resumed = await handler(answered);
      if (resumed) return resumed;
    }
    return null;
  }
}
