import { parentPort } from 'node:worker_threads';
import { prepareSource } from './document-parsers.js';

/** Prepares sources (see BuiltInDocumentParser.prepare) away from the event loop; the parent enforces the time budget. */
parentPort!.on('message', (job: { id: number; name: string; bytes: Uint8Array }) => {
  const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
  void prepareSource(job.name, bytes).then(
    (result) => parentPort!.postMessage({ id: job.id, result }),
    (err: unknown) =>
      parentPort!.postMessage({ id: job.id, result: { error: `Text extraction failed: ${(err as Error).message}` } }),
  );
});
