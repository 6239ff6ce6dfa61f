export interface ShellResult {
  exitCode: number | null;
  /** stdout and stderr interleaved, cut at the byte cap. */
  output: string;
  truncated: boolean;
  timedOut: boolean;
}

/** Runs a shell command in a folder with a time limit and an output cap (the Bash tool). */
export abstract class ShellRunner {
  abstract run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
  ): Promise<ShellResult>;
}
