import type {
  BoardFindingDto,
  BoardTaskDto,
  CollabMode,
  EpochOutcome,
  TaskStatus,
  TeamEdgeDto,
  TeamMemberDto,
} from '#contracts/teams.js';

/** Per-epoch limits (docs/api/teams.md, "Limits"): a breach seals the epoch as `error`. */
export interface TeamLimits {
  maxMessages: number;
  maxForwardDepth: number;
  maxDurationMs: number;
}

export const DEFAULT_TEAM_LIMITS: TeamLimits = {
  maxMessages: 200,
  maxForwardDepth: 8,
  maxDurationMs: 2 * 60 * 60 * 1000,
};

export const TeamTexts = {
  teamNotFound: 'Team not found',
  notAMember: 'App is not a member of this team',
  nameTaken: (name: string) => `A member named "${name}" is already in this team`,
  alreadyMember: 'The digital human is already a member of this team',
  edgeNotMember: 'An edge names an app that is not a member of this team',
  noRun: 'No run has started for this team yet',
  runActive: 'A run is already running for this team',
  noRunning: 'No run is running for this team',
  epochNotFound: 'Epoch not found',
  triggerNotFound: 'Trigger not found',
  leadNotMember: 'leadAppId must name a member of this team',
  runEnded: 'The run has ended; nothing more can be sent or posted in it.',
  turnsLost: (member: string, times: number) =>
    `The servers running ${member}'s turns stopped ${times} times in this run; the run was ended.`,
} as const;

/** Tasks that need no more work. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['done', 'rejected'];

export const isTerminal = (status: TaskStatus): boolean => TERMINAL_TASK_STATUSES.includes(status);

/** Every task is settled (an empty board counts: a run with nothing to do is over too). */
export function boardSettled(tasks: readonly BoardTaskDto[]): boolean {
  return tasks.every((t) => isTerminal(t.status));
}

/** What a sealed run produced: work done or findings is output; nothing is no action. */
export function outcomeOf(tasks: readonly BoardTaskDto[], findings: readonly BoardFindingDto[]): EpochOutcome {
  return tasks.some((t) => t.status === 'done') || findings.length > 0 ? 'output' : 'no_action';
}

/** Whether `from` may message `to`: anyone in free mode; along an edge (either direction) in structured mode. */
export function mayMessage(mode: CollabMode, edges: readonly TeamEdgeDto[], from: string, to: string): boolean {
  if (mode === 'free') return true;
  return edges.some((e) => (e.fromAppId === from && e.toAppId === to) || (e.fromAppId === to && e.toAppId === from));
}

/** A member by its name (case and surrounding spaces ignored) or its app id. */
export function findMember(members: readonly TeamMemberDto[], nameOrId: string): TeamMemberDto | undefined {
  const wanted = nameOrId.trim().toLowerCase();
  return members.find((m) => m.appId === nameOrId || m.memberName.trim().toLowerCase() === wanted);
}

/** Which limit a message breaks, if any (`count`: the epoch's messages including this one). */
export function limitBreach(
  limits: TeamLimits,
  facts: { count: number; depth: number; elapsedMs: number },
): string | null {
  if (facts.count > limits.maxMessages)
    return `The run sent more than ${limits.maxMessages} member messages (the limit per run).`;
  if (facts.depth > limits.maxForwardDepth)
    return `A chain of messages went more than ${limits.maxForwardDepth} hops deep (the forward-depth limit): the members may be going back and forth.`;
  if (facts.elapsedMs > limits.maxDurationMs) return timeLimitText(limits);
  return null;
}

/** The breach of a run's time limit, in words. */
export function timeLimitText(limits: TeamLimits): string {
  const ms = limits.maxDurationMs;
  const span =
    ms % 3_600_000 === 0
      ? `${ms / 3_600_000} hour(s)`
      : ms >= 60_000
        ? `${Math.round(ms / 60_000)} minute(s)`
        : `${Math.round(ms / 1000)} second(s)`;
  return `The run went on for more than ${span} (the time limit per run).`;
}

/** An activity's subject: one line, at most 80 characters. */
export function subjectOf(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}

/** Messages as a member reads them in its transcript. */
export function renderMail(
  mail: ReadonlyArray<{ fromAppId: string | null; body: string }>,
  nameOf: (appId: string) => string,
): string {
  return mail
    .map((m) =>
      m.fromAppId === null ? `[From your user]\n${m.body}` : `[Message from ${nameOf(m.fromAppId)}]\n${m.body}`,
    )
    .join('\n\n');
}

/** A member the model proposes for a goal (`POST /api/teams/propose-members`). */
export interface ProposedMember {
  memberName: string;
  role: string;
  responsibility: string;
}

/** At most this many members are proposed (and provisioned). */
export const MAX_PROPOSED_MEMBERS = 5;

export const PROPOSE_SYSTEM_PROMPT =
  'You design small teams of AI workers. Answer only with a JSON array of at most 5 objects ' +
  '{"memberName": short unique name, "role": a few words, "responsibility": one sentence}, nothing else. ' +
  'Propose only the members the goal needs; a lead is added separately, so do not propose one.';

/**
 * The members a model's reply proposes: the JSON array in it (bare or fenced), items with the
 * three texts, names unique (any case), at most MAX_PROPOSED_MEMBERS; anything else is dropped.
 */
export function parseProposal(reply: string): ProposedMember[] {
  const start = reply.indexOf('[');
  const end = reply.lastIndexOf(']');
  if (start < 0 || end <= start) return [];
  let items: unknown;
  try {
    items = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return [];
  }
  if (!Array.isArray(items)) return [];
  const seen = new Set<string>();
  const out: ProposedMember[] = [];
  for (const item of items) {
    const { memberName, role, responsibility } = (item ?? {}) as Record<string, unknown>;
    if (typeof memberName !== 'string' || typeof role !== 'string' || typeof responsibility !== 'string') continue;
    const name = memberName.trim().slice(0, 60);
    if (name === '' || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    out.push({
      memberName: name,
      role: role.trim().slice(0, 120),
      responsibility: responsibility.trim().slice(0, 500),
    });
    if (out.length === MAX_PROPOSED_MEMBERS) break;
  }
  return out;
}
