import { Documented, QueryDto } from '../common/validation.js';

/** Query of the file search (docs/api.md, "Workspaces and files"); judged by the search service. */
@QueryDto()
export class ArtifactSearchQuery {
  @Documented({ type: 'string', description: 'The text to look for in file names and paths' }, { required: true })
  q?: unknown;

  @Documented({ type: 'integer', minimum: 1, default: 50, description: 'At most this many results' })
  limit?: unknown;
}
