import { Injectable, Logger } from '@nestjs/common';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import type { App } from '../kernel/app.js';
import type { Space } from '../kernel/space.js';
import type { AgentTool } from '../kernel/tool.js';
import { AiBrowser, type BrowserScope, conversationScopeKey, runScopeKey } from './ai-browser.js';

/** The permission that gives a digital human the browser; on unless its spec's `permissions` leave it out. */
export const AI_BROWSER_PERMISSION = AI_BROWSER_SERVER;

/**
 * Whether a digital human gets the browser: the user's deny wins, then the user's grant, then
 * the spec's `permissions` (a spec that lists permissions without `ai-browser` gets none), and
 * a spec that lists no permissions at all gets it.
 */
export function appMayUseBrowser(app: Pick<App, 'spec' | 'permissions'>): boolean {
  if (app.permissions.denied.includes(AI_BROWSER_PERMISSION)) return false;
  if (app.permissions.granted.includes(AI_BROWSER_PERMISSION)) return true;
  const listed = app.spec.permissions;
  return listed === undefined || listed.includes(AI_BROWSER_PERMISSION);
}

/** What a turn's system prompt says about the browser when it has the tools. */
export const BROWSER_PROMPT = [
  'You have a web browser (the mcp__ai-browser__browser_* tools). Work in this order: open a page with browser_navigate,',
  'read it with browser_snapshot, act on elements by the uid the latest snapshot gave them, and take a new snapshot after',
  'anything that changes the page (uids of older snapshots no longer work). Wait for content with browser_wait_for.',
  "browser_run runs a prepared script (such as a skill's .claude/skills/<id>/index.js) in the page with JSON params;",
  'browser_evaluate runs a small function for anything else (scrolling, history, reading values). Use browser_tab only',
  "when you need several pages at once. Sites that need a sign-in use the space's browser profile; when a page or a",
  'script says you are not signed in, ask your user to sign in and try again later.',
].join(' ');

/**
 * The end hooks of a turn plan (PlanHooks' `onComplete` and `onFailure`), named here by shape:
 * the agent context imports this one, so this one does not import it back.
 */
interface TurnEndHooks {
  onComplete(result: never): Promise<void>;
  onFailure(failure: never): Promise<void>;
}

/** The browser part of one turn: its tools, the prompt paragraph, and the hooks that save its profile. */
export interface BrowserTurn {
  tools: AgentTool[];
  prompt: string | null;
  /** `hooks` with the browser's end-of-turn work added (the profile saved; a run's pages closed when it ends). */
  hooks<H extends TurnEndHooks>(hooks: H, endsScope?: () => boolean): H;
}

const NO_BROWSER: BrowserTurn = { tools: [], prompt: null, hooks: (hooks) => hooks };

/**
 * Gives turns the AI browser: a chat's when its conversation opened the `ai-browser` toolset,
 * a digital human's chat and runs by its permission. A conversation's pages stay for its next
 * turn (and are reaped when idle); a run's close when the run ends.
 */
@Injectable()
export class BrowserTurns {
  private readonly logger = new Logger('AiBrowser');

  constructor(private readonly browser: AiBrowser) {}

  /** The assistant's chat in `conversationId`, when its `ai-browser` toolset is open. */
  forChat(space: Space, conversationId: string, open: boolean): BrowserTurn {
    if (!open) return NO_BROWSER;
    return this.turn({
      key: conversationScopeKey(conversationId),
      kind: 'chat',
      spaceId: space.id,
      conversationId,
      appId: null,
      workDir: space.path,
      profile: space.id,
    });
  }

  /** A digital human's chat thread. */
  forAppChat(app: App, space: Space, conversationId: string): BrowserTurn {
    if (!appMayUseBrowser(app)) return NO_BROWSER;
    return this.turn({
      key: conversationScopeKey(conversationId),
      kind: 'app-chat',
      spaceId: space.id,
      conversationId,
      appId: app.id,
      workDir: space.path,
      profile: space.id,
    });
  }

  /** A turn of a digital human's run; the run's pages close when `endsScope` says the run ended. */
  forRun(app: App, space: Space, runId: string, conversationId: string): BrowserTurn {
    if (!appMayUseBrowser(app)) return NO_BROWSER;
    return this.turn({
      key: runScopeKey(runId),
      kind: 'run',
      spaceId: space.id,
      conversationId,
      appId: app.id,
      workDir: space.path,
      profile: space.id,
    });
  }

  /** A run that ended without a turn plan (refused, failed to start): its pages close. */
  async runEnded(runId: string): Promise<void> {
    await this.quietly('release', () => this.browser.release(runScopeKey(runId)));
  }

  private turn(scope: BrowserScope): BrowserTurn {
    const after = async (ends: boolean) => {
      await this.quietly('save', () => this.browser.turnEnded(scope));
      if (ends) await this.quietly('release', () => this.browser.release(scope.key));
    };
    return {
      tools: this.browser.tools(scope),
      prompt: BROWSER_PROMPT,
      hooks: (hooks, endsScope = () => false) => ({
        ...hooks,
        onComplete: async (result: never) => {
          try {
            await hooks.onComplete(result);
          } finally {
            await after(endsScope());
          }
        },
        onFailure: async (failure: never) => {
          try {
            await hooks.onFailure(failure);
          } finally {
            // A run whose turn failed has ended; a conversation keeps its pages for the next turn.
            await after(scope.kind === 'run' || endsScope());
          }
        },
      }),
    };
  }

  /** The browser's bookkeeping never fails a turn: a failure is logged with what to check. */
  private async quietly(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.logger.warn({
        msg: `browser ${what} after a turn failed; the pages are reaped when idle`,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
