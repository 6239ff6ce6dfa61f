/**
 * Chromium answers a page-level DevTools command with "Not attached to an active page" while a
 * navigation swaps the page's renderer (a new site commits in a new process): the page is fine a
 * moment later. Such a command is tried again until it is answered or `tries` are spent; any other
 * failure is the caller's at once.
 */
export async function retryWhileDetached<T>(
  command: () => Promise<T>,
  options: { tries: number; delayMs: number },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await command();
    } catch (err) {
      if (attempt >= options.tries || !isDetachedPage(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    }
  }
}

/** Whether `err` is Chromium's answer for a page between renderers. */
export function isDetachedPage(err: unknown): boolean {
  return err instanceof Error && /Not attached to an active page/i.test(err.message);
}
