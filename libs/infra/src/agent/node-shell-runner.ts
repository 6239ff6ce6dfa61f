import { spawn } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import type { AgentSettings } from '#core/config/app-config.js';
import { type ShellResult, ShellRunner } from '#core/ports/shell-runner.port.js';
import type { AppLogger } from '../logging/logger.js';
import { commandEnvironment } from './command-environment.js';
import { hostLayout, type PathLayout, sandboxArgs, sandboxEnvironment, sandboxProbe } from './sandbox.js';

export interface ShellRunnerOptions {
  /** Run commands under bubblewrap (only when it was found to work). */
  sandboxed: boolean;
  /** The bubblewrap program. */
  bwrap?: string;
  /** Sandboxed commands keep the host's network. */
  network: boolean;
}

/**
 * The Bash tool's runner: `bash -c` in the sandbox (see sandbox.ts) when it works, in its own
 * process group, so a timeout or a stop kills the whole tree; stdout and stderr interleaved
 * and capped. Without the sandbox (only when the operator chose `unsandboxed`) commands run
 * with the server's rights and a scrubbed copy of its environment.
 */
export class NodeShellRunner extends ShellRunner {
  readonly sandboxed: boolean;
  private readonly layout: readonly PathLayout[];

  constructor(private readonly options: ShellRunnerOptions = { sandboxed: false, network: false }) {
    super();
    this.sandboxed = options.sandboxed;
    this.layout = options.sandboxed ? hostLayout() : [];
  }

  /** Begins the sandbox's one try (see sandboxProbe), unless Bash is off. */
  static beginProbe(settings: AgentSettings): void {
    if (settings.bash !== 'off') void sandboxProbe(settings.bwrapPath, settings.bashNetwork);
  }

  /** Tries the sandbox once (or takes the try beginProbe began) and says at start what Bash will be. */
  static async create(settings: AgentSettings, logger: AppLogger): Promise<NodeShellRunner> {
    const { bash: mode, bashNetwork: network, bwrapPath: bwrap } = settings;
    if (mode === 'off') return new NodeShellRunner({ sandboxed: false, network });
    const probe = await sandboxProbe(bwrap, network);
    if (probe.ok) {
      logger.info('Bash tool: commands run in the bubblewrap sandbox', { network });
    } else if (mode === 'unsandboxed') {
      logger.warn('Bash tool: no working sandbox; commands run UNSANDBOXED (SVC_AGENT_BASH=unsandboxed)', {
        reason: probe.reason,
      });
    } else {
      logger.warn('Bash tool: off, no working sandbox (install bubblewrap, or set SVC_AGENT_BASH=unsandboxed)', {
        reason: probe.reason,
      });
    }
    return new NodeShellRunner({ sandboxed: probe.ok, network, bwrap });
  }

  async run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
  ): Promise<ShellResult> {
    if (!this.sandboxed) {
      return runCommand('/bin/bash', ['-c', command], options.cwd, commandEnvironment(process.env), options);
    }
    let workspace: string;
    try {
      workspace = await realpath(options.cwd);
    } catch (err) {
      return {
        exitCode: null,
        output: `Failed to start: ${(err as Error).message}`,
        truncated: false,
        timedOut: false,
      };
    }
    const args = [
      ...sandboxArgs({ workspace, network: this.options.network, layout: this.layout }),
      '/bin/bash',
      '-c',
      command,
    ];
    // bwrap itself gets the clean environment too: /proc/1/environ inside shows only that.
    return runCommand(this.options.bwrap ?? '/usr/bin/bwrap', args, workspace, sandboxEnvironment(workspace), options);
  }
}

function runCommand(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  options: { timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
): Promise<ShellResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let timedOut = false;
    const collect = (chunk: Buffer): void => {
      if (size >= options.maxOutputBytes) {
        truncated = true;
        return;
      }
      const room = options.maxOutputBytes - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length > room) truncated = true;
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    // Killing bwrap's group kills the sandbox too (--die-with-parent ends its PID namespace).
    const killTree = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, options.timeoutMs);
    const onAbort = (): void => killTree();
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode: code, output: Buffer.concat(chunks).toString('utf8'), truncated, timedOut });
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output: `Failed to start: ${err.message}`, truncated: false, timedOut: false });
    });
  });
}
