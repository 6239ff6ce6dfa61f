import { Injectable, type OnModuleInit } from '@nestjs/common';
import { COMPACTION_KIND, buildHistory } from '../../agent/context-builder.js';
import type { TurnIO, TurnPlan } from '../../agent/engine/turn-plan.js';
import { ToolRegistry } from '../../agent/tool-registry.js';
import type { AgentTool } from '../../kernel/tool.js';
import {
  isRefusal,
  refuseTurn,
  TurnPlanBuilder,
  type TurnRefusal,
  type UnplannedEnding,
} from '../../agent/turn-plan-builder.js';
import { TurnPlanBuilders } from '../../agent/turn-plan-builders.js';
import { type TurnGround, TurnPreamble } from '../../agent/turn-preamble.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { appMayUseServiceApi, serviceApiTools } from '../../assistant-api/service-api-tool.js';
import { McpServers } from '../../mcp/mcp-servers.service.js';
import { AssistantApi } from '../../ports/assistant-api.port.js';
import { withSkills } from '../../skills/skill-rules.js';
import { SkillsService } from '../../skills/skills.service.js';
import { Clock } from '../../ports/clock.port.js';
import type { TurnRecord } from '../../ports/turn.repository.port.js';
import type { App } from '../../kernel/app.js';
import { BrowserTurns } from '../../browser/browser-turns.js';
import { KnowledgeTurns } from '../../knowledge/knowledge-turns.js';
import { AppData } from '../app-data.js';
import { AppsService } from '../apps.service.js';
import { AppRunsService, type RunRequest, RunTexts } from './app-runs.service.js';
import { appMayUseShell, appModelPin, appSystemPrompt } from './app-prompt.js';
import { RunSlots } from './run-slots.js';
import { isFinalReport, REPORT_TO_USER, reportToUserTool, type RunReport } from './report-to-user.tool.js';

/** Reminders a run gets when it ends a turn without reporting, before it fails. */
export const MAX_REPORT_NUDGES = 2;

/**
 * A turn of a digital human's run (`app-run`): the run's messages, the app's system prompt,
 * settings and memory, the built-ins its permissions allow plus `report_to_user` (no
 * questions: nobody is watching a run). A run ends with a report; a turn that ends without
 * one gets a reminder (a new turn of the same run) up to MAX_REPORT_NUDGES times, then fails.
 */
@Injectable()
export class AppRunPlanBuilder extends TurnPlanBuilder implements OnModuleInit {
  readonly kind = 'app-run' as const;

  constructor(
    private readonly builders: TurnPlanBuilders,
    private readonly apps: AppsService,
    private readonly runs: AppRunsService,
    private readonly data: AppData,
    private readonly conversations: ConversationsService,
    private readonly preamble: TurnPreamble,
    private readonly tools: ToolRegistry,
    private readonly clock: Clock,
    private readonly mcp: McpServers,
    private readonly skills: SkillsService,
    private readonly api: AssistantApi,
    private readonly slots: RunSlots,
    private readonly browser: BrowserTurns,
    private readonly knowledge: KnowledgeTurns,
  ) {
    super();
  }

  onModuleInit(): void {
    this.builders.register(this);
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    const { appId } = runRequestOf(turn);
    const app = await this.apps.get(appId).catch(() => null);
    if (!app) return refuseTurn('The digital human of this run no longer exists.', { errorCode: 'NOT_FOUND' });
    // A run announces no session: nobody opened it.
    const ground = await this.preamble.prepare({ turn, io, messages: null, pins: [appModelPin(app)] });
    if (isRefusal(ground)) return ground;
    // A required server that went away since the trigger fails the run with the reason.
    const mcp = await this.mcp.runTools(app);
    if (mcp.blocked !== null) return refuseTurn(mcp.blocked, { errorCode: 'MCP_UNAVAILABLE' });
    // Past this point the run holds one of this process's run slots until its plan ends.
    const release = await this.slots.acquire(io.signal);
    try {
      return await this.plan(turn, io, app, ground, mcp.tools, release);
    } catch (err) {
      release();
      throw err;
    }
  }

  private async plan(
    turn: TurnRecord,
    io: TurnIO,
    app: App,
    ground: TurnGround,
    mcpTools: AgentTool[],
    release: () => void,
  ): Promise<TurnPlan> {
    const { runId, nudges, triggerType } = runRequestOf(turn);
    const { space } = ground;
    const skills = await this.skills.forTurn(space, null);
    const messages = await this.runs.runMessages(app, runId);
    io.historyHolds(messages.map((m) => m.id));
    let final: RunReport | null = null;
    let nudgeNext = false;
    const browser = this.browser.forRun(app, space, runId, turn.conversationId);
    const knowledge = await this.knowledge.forTurn({ spaceId: space.id, appId: app.id });
    const tools = this.tools.builtins({ bash: appMayUseShell(app), askUser: false }).with(
      reportToUserTool(async (report) => {
        if (final) return 'You already reported the end of this run; end your turn.';
        if (isFinalReport(report)) final = report;
        return this.runs.recordReport(app.id, runId, report);
      }),
      ...mcpTools,
      ...browser.tools,
      ...knowledge.tools,
      ...skills.tools,
      ...(appMayUseServiceApi(app) ? await serviceApiTools(this.api) : []),
    );
    const record = async (content: string, meta: Record<string, unknown>, thoughts: unknown) => {
      if (content === '' && (!Array.isArray(thoughts) || thoughts.length === 0)) return;
      await this.conversations.appendMessage(
        turn.conversationId,
        { role: 'assistant', content, meta: { runId, turnId: turn.id, ...meta } },
        thoughts,
      );
    };
    return {
      system: withSkills(
        appSystemPrompt({
          app,
          workspacePath: space.path,
          now: new Date(this.clock.now()),
          memory: await this.data.readMemory(app.id, app.spaceId, space),
          toolNames: tools.names(),
          closing: [
            ...(browser.prompt === null ? [] : [browser.prompt]),
            ...(knowledge.prompt === null ? [] : [knowledge.prompt]),
            'You are running on your own: nobody reads your replies while you work.',
            `End every run by calling ${REPORT_TO_USER}: type "complete" or "output" when done, "escalation" with a question when you need your user to decide; "milestone" reports progress along the way.`,
          ],
        }),
        skills,
      ),
      tools,
      history: buildHistory(messages),
      model: { ...ground.model, effort: 'off' },
      workspace: space,
      contextTokens: 0,
      io,
      app,
      // The run's pages close when it ends: reported, failed, or out of reminders.
      hooks: browser.hooks(
        {
          onComplete: async ({ reply, thoughts, tokenUsage, model }) => {
            release();
            await record(reply, { model, tokenUsage }, thoughts);
            if (final) return this.runs.finishRun(app.id, runId, final, triggerType);
            if (nudges < MAX_REPORT_NUDGES) nudgeNext = true;
            else await this.runs.failRun(app.id, runId, RunTexts.noReport, false, triggerType);
          },
          onFailure: async ({ reply, thoughts, tokenUsage, error, interrupted }) => {
            release();
            await record(reply, { tokenUsage, ...(interrupted ? { interrupted: true } : { error }) }, thoughts);
            if (final && !interrupted) return this.runs.finishRun(app.id, runId, final, triggerType);
            await this.runs.failRun(app.id, runId, error, interrupted !== null, triggerType);
          },
          onCompacted: async ({ summary, preTokens }) => {
            await this.conversations.appendMessage(turn.conversationId, {
              role: 'system',
              content: summary,
              meta: { kind: COMPACTION_KIND, preTokens, turnId: turn.id, runId },
            });
          },
          afterCompleted: async () => {
            if (!nudgeNext) return;
            if (!(await this.runs.nudge(app.id, runId, turn.spaceId, nudges + 1, triggerType))) {
              await this.runs.failRun(app.id, runId, RunTexts.noReport, false, triggerType);
              await this.browser.runEnded(runId);
            }
          },
          // A nudge queued the run's next turn (the app is still busy); otherwise the next delivery may start.
          afterEnded: () => this.runs.runEnded(app.id),
        },
        () => !nudgeNext,
      ),
    };
  }

  override async endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    const { appId, runId, triggerType } = runRequestOf(turn);
    await this.runs.failRun(
      appId,
      runId,
      ending.error,
      ending.status === 'interrupted',
      triggerType,
      ending.outage === true,
    );
    await this.browser.runEnded(runId);
    await this.runs.runEnded(appId);
  }
}

function runRequestOf(turn: TurnRecord): RunRequest {
  const r = turn.request as Partial<RunRequest> & { trigger?: { type?: unknown } };
  const triggerType = r.triggerType ?? (typeof r.trigger?.type === 'string' ? r.trigger.type : 'unknown');
  return {
    appId: String(r.appId ?? ''),
    runId: String(r.runId ?? turn.id),
    nudges: Number(r.nudges ?? 0),
    triggerType,
  };
}
