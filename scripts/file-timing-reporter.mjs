// A node:test reporter that adds up, per test file, the time of its top-level tests and writes
// them as JSON to the path in SVC_TEST_TIMING_FILE. run-tests.mjs prints the slowest files of each
// pass from it, so the suite's time can be watched and spent where it goes.
import { writeFileSync } from 'node:fs';

export default async function* fileTiming(source) {
  const perFile = {};
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      perFile[event.data.file] = (perFile[event.data.file] ?? 0) + (event.data.details?.duration_ms ?? 0);
    }
  }
  if (process.env.SVC_TEST_TIMING_FILE) writeFileSync(process.env.SVC_TEST_TIMING_FILE, JSON.stringify(perFile));
  yield '';
}
