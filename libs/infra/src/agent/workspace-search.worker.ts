import { parentPort, workerData } from 'node:worker_threads';
import { runSearchJob, type SearchAnswer, type SearchJob } from './node-workspace-search.js';

/** One search (see NodeWorkspaceSearch), run away from the event loop; the parent enforces the time limit. */
const job = workerData as SearchJob;
runSearchJob(job).then(
  (result) => parentPort!.postMessage({ ok: true, result } satisfies SearchAnswer),
  (err: unknown) => parentPort!.postMessage({ ok: false, message: (err as Error).message } satisfies SearchAnswer),
);
