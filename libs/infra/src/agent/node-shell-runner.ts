import { spawn } from 'node:child_process';
import { type ShellResult, ShellRunner } from '#core/ports/shell-runner.port.js';
import { commandEnvironment } from './command-environment.js';

/**
 * The Bash tool's runner: `bash -c` in its own process group, so a timeout or a stop kills
 * the whole tree; stdout and stderr interleaved and capped.
 */
export class NodeShellRunner extends ShellRunner {
  run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
  ): Promise<ShellResult> {
    return new Promise((resolve) => {
      const child = spawn('/bin/bash', ['-c', command], {
        cwd: options.cwd,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: commandEnvironment(process.env),
      });
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
}
