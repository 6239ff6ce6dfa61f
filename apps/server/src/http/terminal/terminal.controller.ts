import { Controller, Get, Post } from '@nestjs/common';
import { ErrorTexts } from '#contracts/errors.js';
import { DomainError } from '#core/errors/domain-error.js';
import { ApiDone } from '../openapi/api-data.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

const unavailable = (): never => {
  throw DomainError.forbidden(ErrorTexts.terminalUnavailableHere);
};

const NOTE =
  'The terminal exists on macOS and Windows hosts only (spec doc 1, "Terminal streaming"): this server ' +
  'answers 403 `{success:false, error:"Terminal is not available on this host"}`. Any body is ignored.';

/**
 * The Terminal group (docs/api/terminal.md): present so a client written for the original gets the
 * original's answer where it has no terminal, rather than the web page or a 404.
 */
@ApiTags('Terminal')
@Controller('api/terminal')
export class TerminalController {
  @Get('list')
  @ApiOperation({ summary: 'List terminal sessions (not available on this host)', description: NOTE })
  @ApiDone(403)
  listGet(): never {
    return unavailable();
  }

  @Post('list')
  @ApiOperation({ summary: 'List terminal sessions (not available on this host)', description: NOTE })
  @ApiDone(403)
  list(): never {
    return unavailable();
  }

  @Post('create')
  @ApiOperation({ summary: 'Open a terminal session (not available on this host)', description: NOTE })
  @ApiDone(403)
  create(): never {
    return unavailable();
  }

  @Post('input')
  @ApiOperation({ summary: 'Type into a terminal session (not available on this host)', description: NOTE })
  @ApiDone(403)
  input(): never {
    return unavailable();
  }

  @Post('resize')
  @ApiOperation({ summary: 'Resize a terminal session (not available on this host)', description: NOTE })
  @ApiDone(403)
  resize(): never {
    return unavailable();
  }

  @Post('kill')
  @ApiOperation({ summary: 'End a terminal session (not available on this host)', description: NOTE })
  @ApiDone(403)
  kill(): never {
    return unavailable();
  }

  @Post('replay')
  @ApiOperation({
    summary: "Read a terminal session's earlier output (not available on this host)",
    description: NOTE,
  })
  @ApiDone(403)
  replay(): never {
    return unavailable();
  }
}
