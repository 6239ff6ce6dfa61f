export interface ShellResult {
  exitCode: number | null;
  /** stdout and stderr interleaved, cut at the byte cap. */
  output: string;
  truncated: boolean;
  timedOut: boolean;
}

/** Runs a shell command in a folder with a time limit and an output cap (the Bash tool). */
export abstract class ShellRunner {
  /**
   * Whether commands run in a sandbox that sees only the workspace folder (plus read-only
   * system folders): no data folder, no other space, no server process or environment.
   * Settled once at start by actually trying the sandbox.
   */
  abstract readonly sandboxed: boolean;

  abstract run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
  ): Promise<ShellResult>;
}
