import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import type { FileContent } from '#core/artifacts/artifact.js';
import { ArtifactsService } from '#core/artifacts/artifacts.service.js';
import type { FileTypeInfo } from '#core/artifacts/file-types.js';
import { PathQuery, SaveBody } from './artifacts.dto.js';

type Ok<T> = { success: true; data: T };
const ok = <T>(data: T): Ok<T> => ({ success: true, data });

/** Files by absolute path, inside any space's working folder (spec doc 2, "Files (no space in path)"). */
@Controller('api/artifacts')
export class ArtifactsController {
  constructor(private readonly artifacts: ArtifactsService) {}

  @Get('content')
  async content(@Query() query: PathQuery): Promise<Ok<FileContent>> {
    return ok(await this.artifacts.readContent(query.path));
  }

  @Get('detect-type')
  async detectType(@Query() query: PathQuery): Promise<Ok<FileTypeInfo>> {
    return ok(await this.artifacts.detectType(query.path));
  }

  @Post('save')
  @HttpCode(200)
  async save(@Body() body: SaveBody): Promise<{ success: true }> {
    await this.artifacts.save(body.path, body.content);
    return { success: true };
  }
}
