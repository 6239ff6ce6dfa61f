import type { AppConfig } from '#core/config/app-config.js';

/** Settings of file watching and search, from the validated configuration. */
export interface ArtifactEventsSettings {
  /** SVC_FILE_WATCH_POLLING=1: poll the disk instead of native events (network volumes). */
  fileWatchPolling: boolean;
  /** SVC_SEARCH_INDEX_LIMIT: most paths the search index holds per space. */
  searchIndexLimit: number;
}

export function artifactEventsSettings(config: AppConfig): ArtifactEventsSettings {
  return { fileWatchPolling: config.fileWatchPolling, searchIndexLimit: config.searchIndexLimit };
}
