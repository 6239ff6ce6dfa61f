import { APPROVAL_TIMEOUT_DEFAULT_SECONDS, type ApprovalPolicy } from '#contracts/agent.js';
import { DomainError } from '../errors/domain-error.js';
import { compileGlob, globPatternProblem } from '../kernel/glob.js';

/**
 * Pure rules of tool approvals (docs/api/agent.md, "Tool approvals"): the policy's shape, and
 * which tool calls it holds. No I/O here.
 */

/** The configuration branch and the user-override key that hold a policy. */
export const APPROVALS_KEY = 'approvals';

/** Most patterns one policy holds. */
export const MAX_APPROVAL_PATTERNS = 100;
/** Longest wait for an answer: a week (a digital human's run may wait on its user). */
export const MAX_APPROVAL_TIMEOUT_SECONDS = 7 * 24 * 3600;

/**
 * `value` as a policy, or a 400 naming the field (`approvals.tools[2]`). Null and absent are no
 * policy; so is an empty `tools` list (kept as given, it decides nothing).
 */
export function parseApprovalPolicy(value: unknown, field = APPROVALS_KEY): ApprovalPolicy | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw DomainError.invalid(`${field} must be an object`);
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key !== 'tools' && key !== 'timeoutSeconds')
      throw DomainError.invalid(`${field}.${key} is not an approvals setting; known: tools, timeoutSeconds`);
  }
  if (!Array.isArray(raw.tools)) throw DomainError.invalid(`${field}.tools must be a list of tool name patterns`);
  if (raw.tools.length > MAX_APPROVAL_PATTERNS)
    throw DomainError.invalid(`${field}.tools holds at most ${MAX_APPROVAL_PATTERNS} patterns`);
  const tools = raw.tools.map((pattern, i) => {
    if (typeof pattern !== 'string' || pattern.trim() === '')
      throw DomainError.invalid(`${field}.tools[${i}] must be a non-empty tool name pattern`);
    const problem = globPatternProblem(pattern);
    if (problem) throw DomainError.invalid(`${field}.tools[${i}] is not a usable pattern: ${problem}`);
    return pattern;
  });
  let timeoutSeconds = APPROVAL_TIMEOUT_DEFAULT_SECONDS;
  if (raw.timeoutSeconds !== undefined) {
    const t = raw.timeoutSeconds;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > MAX_APPROVAL_TIMEOUT_SECONDS)
      throw DomainError.invalid(
        `${field}.timeoutSeconds must be a whole number of seconds from 1 to ${MAX_APPROVAL_TIMEOUT_SECONDS}`,
      );
    timeoutSeconds = t;
  }
  return { tools, timeoutSeconds };
}

/** A policy read back from storage: what does not parse (stored by an older version) holds nothing. */
export function storedApprovalPolicy(value: unknown): ApprovalPolicy | null {
  try {
    return parseApprovalPolicy(value);
  } catch {
    return null;
  }
}

/** A policy that decides something: at least one pattern. */
export function isActivePolicy(policy: ApprovalPolicy | null): policy is ApprovalPolicy {
  return policy !== null && policy.tools.length > 0;
}

/** Which tool names the policy holds for approval (patterns compiled once; `!x` patterns exclude). */
export function approvalMatcher(policy: ApprovalPolicy): (toolName: string) => boolean {
  const include = policy.tools.filter((p) => !p.startsWith('!')).map((p) => compileGlob(p));
  const exclude = policy.tools.filter((p) => p.startsWith('!')).map((p) => compileGlob(p.slice(1)));
  return (name) => include.some((m) => m(name)) && !exclude.some((m) => m(name));
}

/**
 * The policy of a turn or a conversation: a digital human's own (`approvals` in its user
 * overrides, present even when empty) wins over the configuration's for its runs and chats.
 */
export function effectivePolicy(appOverride: unknown, configured: unknown): ApprovalPolicy | null {
  if (appOverride !== undefined) return storedApprovalPolicy(appOverride);
  return storedApprovalPolicy(configured);
}

/** The refusal the model gets as the tool result of a rejected call. */
export function rejectionText(reason: string): string {
  return `The user rejected this tool call: ${reason}`;
}

export const RejectionReasons = {
  none: 'no reason given',
  timeout: (seconds: number) => `nobody answered within ${seconds} seconds`,
  stopped: 'the turn was stopped',
} as const;
