import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { Check, QueryDto } from '../common/validation.js';

/**
 * Request shapes of the file operations. Fields are checked for type here; whether a
 * required one is present is the service's call, so its message names the field the way
 * the specification does ("Missing file path", "name is required").
 */

/** Only digits become a number; anything else stays a string and fails IsInt. */
const digitsToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

@QueryDto()
export class ListArtifactsQuery {
  @IsOptional()
  @JSONSchema({ default: 2, description: 'Levels below the root to list (1: its own entries)' })
  @Transform(digitsToNumber)
  @IsInt({ message: 'maxDepth must be a non-negative integer' })
  @Min(0, { message: 'maxDepth must be a non-negative integer' })
  maxDepth?: number;
}

/**
 * The file's path: required (documented so), but judged by the service, whose message for a
 * missing one is the specification's ("Missing file path").
 */
@QueryDto()
export class PathQuery {
  @Check(
    (v) => v === undefined || typeof v === 'string',
    'path must be a string',
    {
      type: 'string',
      description:
        "The file's absolute path, inside a space's folder (an upload's may be relative to the space's root)",
    },
    { required: true },
  )
  path?: string;
}

/**
 * A string field that the operation requires: documented as required, judged here only as a
 * string (absent and null go on to the service, whose message for them is the specification's).
 */
const RequiredString = (field: string): PropertyDecorator =>
  Check(
    (v) => v === undefined || v === null || typeof v === 'string',
    `${field} must be a string`,
    { type: 'string' },
    { required: true },
  );

export class PathBody {
  @RequiredString('path')
  path?: string;
}

export class SaveBody {
  @RequiredString('path')
  path?: string;

  @RequiredString('content')
  content?: string;
}

export class ChildrenBody {
  @RequiredString('dirPath')
  dirPath?: string;
}

export class CreateFileBody {
  @RequiredString('name')
  name?: string;

  @IsOptional()
  @IsString()
  parentPath?: string;

  @IsOptional()
  @IsString()
  content?: string;
}

export class CreateFolderBody {
  @RequiredString('name')
  name?: string;

  @IsOptional()
  @IsString()
  parentPath?: string;
}

export class MoveBody {
  @RequiredString('oldPath')
  oldPath?: string;

  @IsOptional()
  @IsString()
  newParentPath?: string;
}

export class RenameBody {
  @RequiredString('oldPath')
  oldPath?: string;

  @RequiredString('newName')
  newName?: string;
}

/** Restore an entry of a space's trash, at its original path or at `path`. */
export class RestoreTrashBody {
  @Check(
    (v) => v === undefined || v === null || typeof v === 'string',
    'id must be a string',
    { type: 'string', description: 'The entry, as the trash listing names it' },
    { required: true },
  )
  id?: string;

  @IsOptional()
  @IsString()
  @JSONSchema({
    description:
      "Where to put it instead of its original path: relative to the space's folder, or absolute inside it (folders on the way are created)",
  })
  path?: string;
}
