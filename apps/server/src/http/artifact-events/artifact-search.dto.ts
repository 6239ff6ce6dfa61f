import { Documented, QueryDto } from '../common/validation.js';

/** Query of the file search (docs/api.md, "Workspaces and files"); judged by the search service. */
@QueryDto()
export class ArtifactSearchQuery {
  @Documented({ type: 'string', description: 'The text to look for in file names and paths' })
  q?: unknown;

  @Documented({ type: 'string', description: 'A number: at most this many results' })
  limit?: unknown;
}
