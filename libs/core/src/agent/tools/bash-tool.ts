import type { BashMode } from '../../config/app-config.js';
import { ShellRunner } from '../../ports/shell-runner.port.js';
import { type AgentTool, optionalNumber, requireString } from '../../kernel/tool.js';

export const BASH_MAX_OUTPUT_BYTES = 30_000;

/**
 * Whether the Bash tool is offered: never when off; with the sandbox only, unless the operator
 * chose `unsandboxed` (then also where no sandbox works, with the server's own rights).
 */
export function bashOffered(mode: BashMode, sandboxed: boolean): boolean {
  return mode === 'unsandboxed' || (mode === 'sandboxed' && sandboxed);
}

export function bashTool(shell: ShellRunner, defaultTimeoutMs: number): AgentTool {
  return {
    name: 'Bash',
    description:
      `Run a shell command in the workspace folder. Time limit ${Math.round(defaultTimeoutMs / 1000)} s by default ` +
      `(timeout in ms, at most 10 minutes); output is cut at ${BASH_MAX_OUTPUT_BYTES} bytes.`,
    inputSchema: {
      type: 'object',
      properties: { command: { type: 'string' }, timeout: { type: 'number', description: 'milliseconds' } },
      required: ['command'],
    },
    async run(input, { space, signal }) {
      const command = requireString(input, 'command');
      const timeoutMs = Math.min(optionalNumber(input, 'timeout') ?? defaultTimeoutMs, 600_000);
      const result = await shell.run(command, {
        cwd: space.path,
        timeoutMs,
        maxOutputBytes: BASH_MAX_OUTPUT_BYTES,
        signal,
      });
      const notes = [
        result.truncated ? `(output cut at ${BASH_MAX_OUTPUT_BYTES} bytes)` : '',
        result.timedOut ? `(command timed out after ${timeoutMs} ms)` : '',
        result.exitCode !== null && result.exitCode !== 0 ? `(exit code ${result.exitCode})` : '',
      ].filter(Boolean);
      const output = [result.output.trimEnd(), ...notes].filter(Boolean).join('\n') || '(no output)';
      return { output, isError: result.timedOut || (result.exitCode !== null && result.exitCode !== 0) };
    },
  };
}
