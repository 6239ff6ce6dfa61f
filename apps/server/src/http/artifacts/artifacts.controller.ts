import { Readable } from 'node:stream';
import { Body, Controller, Get, HttpCode, Post, Query, StreamableFile } from '@nestjs/common';
import type { FileContent } from '#core/artifacts/artifact.js';
import { ArtifactsService } from '#core/artifacts/artifacts.service.js';
import type { FileTypeInfo } from '#core/artifacts/file-types.js';
import { PathQuery, SaveBody } from './artifacts.dto.js';
import { ApiBytes, ApiData, ApiDone } from '../openapi/api-data.js';
import { FILE_CONTENT, FILE_TYPE } from '../openapi/response-schemas.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/** Files by absolute path, inside any space's working folder (docs/api.md, "Workspaces and files"). */
@ApiTags('Workspaces and files')
@Controller('api/artifacts')
export class ArtifactsController {
  constructor(private readonly artifacts: ArtifactsService) {}

  @Get('content')
  @ApiOperation({
    summary: "Read a file's content",
    description:
      'Text as UTF-8, binary types (images, pdf, archives) base64-encoded. Above 10 MB of text or 50 MB of binary: 500 `File too large`; use download.',
  })
  @Assistant()
  @ApiData(FILE_CONTENT, 403, 404)
  async content(@Query() query: PathQuery): Promise<SuccessBody<FileContent>> {
    return ok(await this.artifacts.readContent(query.path));
  }

  /** Addition to the interface (docs/api.md, "Uploads and downloads"): the file's bytes, streamed, as an attachment named after the file. */
  @Get('download')
  @ApiOperation({
    summary: "Download a file's bytes",
    description:
      "Streamed as an attachment named after the file, with the file's own media type (`application/octet-stream` when unknown).",
  })
  @ApiBytes('*/*', 403, 404)
  async download(@Query() query: PathQuery): Promise<StreamableFile> {
    const file = await this.artifacts.openDownload(query.path);
    return new StreamableFile(Readable.from(file.chunks), {
      type: file.mimeType,
      length: file.size,
      disposition: attachmentDisposition(file.name),
    });
  }

  @Get('detect-type')
  @ApiOperation({
    summary: "Detect a file's type",
    description:
      "Answers the file type of an existing file anywhere inside a space's folder, judged from its name and first bytes. 400 `Missing file path` without `path`, `Path is a directory` for a folder; 403 `Access denied` outside every space's folder or inside the reserved `.svc` folder; 404 `File not found`.",
  })
  @Assistant()
  @ApiData(FILE_TYPE, 403, 404)
  async detectType(@Query() query: PathQuery): Promise<SuccessBody<FileTypeInfo>> {
    return ok(await this.artifacts.detectType(query.path));
  }

  @Post('save')
  @ApiOperation({
    summary: "Replace a file's content",
    description:
      "Replaces the whole file at `path` with `content` (text), atomically, or creates it when its folder exists; the path may be in any space's folder. 400 `Missing file path`, `content is required`, `Path is a directory`; 403 `Access denied` outside every space's folder or inside the reserved `.svc` folder; 404 `Folder not found` when the parent folder is missing.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone(403)
  async save(@Body() body: SaveBody): Promise<{ success: true }> {
    await this.artifacts.save(body.path, body.content);
    return { success: true };
  }
}

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form. */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
