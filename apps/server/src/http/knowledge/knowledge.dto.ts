import { IsOptional, IsString } from 'class-validator';
import { Documented } from '../common/validation.js';

/**
 * Request bodies and queries of the Knowledge bases operations (docs/api/knowledge.md). Shapes
 * are documented here; what the fields hold is checked by KnowledgeService (400 naming the field).
 */

export class CreateKnowledgeBaseDto {
  @Documented({ type: 'string' }, { required: true })
  name: unknown;

  @Documented({ type: 'string' })
  icon?: unknown;

  @Documented({ type: 'string' })
  description?: unknown;
}

export class UpdateKnowledgeBaseDto {
  @Documented({ type: 'string' })
  name?: unknown;

  @Documented({ type: 'string' })
  icon?: unknown;

  @Documented({ type: 'string' })
  description?: unknown;

  @Documented({ type: 'string', enum: ['active', 'paused', 'error'] })
  status?: unknown;

  @Documented({
    oneOf: [
      {
        type: 'object',
        properties: { modelSourceId: { type: 'string' }, model: { type: 'string' }, dimensions: { type: 'integer' } },
        required: ['modelSourceId', 'model', 'dimensions'],
      },
      { type: 'null' },
    ],
  })
  embedding?: unknown;
}

export class SetDefaultDto {
  @Documented({ oneOf: [{ type: 'string' }, { type: 'null' }] }, { required: true })
  kbId: unknown;
}

export class SpaceBindingDto {
  @Documented({ type: 'string' }, { required: true })
  spaceId: unknown;
}

export class AppBindingDto {
  @Documented({ type: 'string' }, { required: true })
  appId: unknown;
}

export class AddFilesDto {
  @Documented({
    type: 'string',
    description:
      'The workspace the paths are in (relative to its folder); omitted: absolute server paths under SVC_KB_IMPORT_ROOTS',
  })
  spaceId?: unknown;

  @Documented({ type: 'array', items: { type: 'string' } }, { required: true })
  filePaths: unknown;
}

export class UploadQuery {
  @IsOptional()
  @IsString()
  name?: string;
}

export class LinkDirDto {
  @Documented({ type: 'string', format: 'uuid' }, { required: true })
  spaceId: unknown;

  @Documented({ type: 'string', description: "A folder inside the space's folder ('' or '.': the whole space)" })
  path?: unknown;

  @Documented({ type: 'string' })
  label?: unknown;
}

export class RemoveRawDto {
  @Documented({ type: 'string' }, { required: true })
  relativePath: unknown;
}

export class ResolveSourcesDto {
  @Documented({ type: 'array', items: { type: 'string' } }, { required: true })
  readPaths: unknown;
}

export class SearchDto {
  @Documented({ type: 'string' }, { required: true })
  query: unknown;

  @Documented({ type: 'integer', minimum: 1, maximum: 50 })
  topK?: unknown;

  @Documented({ type: 'string', enum: ['hybrid', 'keyword', 'semantic'] })
  mode?: unknown;
}
