import { basename } from 'node:path';
import { Injectable } from '@nestjs/common';
import type { MessageAttachmentDto } from '#contracts/conversations.js';
import { ErrorCodes } from '#contracts/errors.js';
import { ArtifactErrors } from '../artifacts/artifacts.service.js';
import { detectFileType, SNIFF_BYTES } from '../artifacts/file-types.js';
import { isInServiceFolder } from '../artifacts/path-rules.js';
import { DomainError } from '../errors/domain-error.js';
import type { Message } from '../kernel/conversation.js';
import type { Space } from '../kernel/space.js';
import { FileStore, type GuardedPath } from '../ports/file-store.port.js';

/** At most this many files go with one message (docs/api.md, "Attachments"). */
export const MAX_ATTACHMENTS = 10;
/** An attached image is handed to the model whole; providers take about 5 MB an image. */
export const MAX_ATTACHED_IMAGE_BYTES = 5 * 1024 * 1024;
/** The image types every provider accepts; any other file is named to the model for Read. */
export const ATTACHABLE_IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/**
 * A file attached to a user message, as the message record keeps it (`meta.attachments`): a
 * reference to a file in the conversation's space, never its bytes, so the record stays small;
 * an image's bytes are read when a turn builds the model's context.
 */
export type StoredAttachment = MessageAttachmentDto;

/** The meta key of a user message's attachments. */
export const ATTACHMENTS_META = 'attachments';

/** In the copies `withImages` makes: the paths of attached images no longer readable. */
export const MISSING_ATTACHMENTS_META = 'missingAttachments';

/** The stored attachments of a message's meta (anything malformed is skipped). */
export function attachmentsOf(meta: Record<string, unknown>): StoredAttachment[] {
  const value = meta[ATTACHMENTS_META];
  if (!Array.isArray(value)) return [];
  return value.filter(
    (a): a is StoredAttachment =>
      !!a &&
      typeof a === 'object' &&
      typeof (a as StoredAttachment).path === 'string' &&
      typeof (a as StoredAttachment).mediaType === 'string' &&
      typeof (a as StoredAttachment).image === 'boolean',
  );
}

/** What the model reads for an attachment it does not get as an image part. */
export function attachmentNote(attachment: StoredAttachment, missing = false): string {
  return missing
    ? `[Attached ${attachment.image ? 'image' : 'file'} ${attachment.path} is no longer in the workspace]`
    : `[Attached file: ${attachment.path} (${attachment.mediaType}, ${attachment.size} bytes) in the workspace; open it with Read]`;
}

/**
 * The `attachments` of `POST /api/agent/message`: files already in the conversation's space
 * (uploaded first with the upload operation), referred to by path. Checked by the path guard
 * like every file operation, each error naming the item's field.
 */
@Injectable()
export class MessageAttachments {
  constructor(private readonly files: FileStore) {}

  /** Checks `value` (the request's field) against the space's files; nothing is written. */
  async resolve(space: Space, value: unknown): Promise<StoredAttachment[]> {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw DomainError.invalid('attachments must be an array');
    if (value.length > MAX_ATTACHMENTS) {
      throw DomainError.invalid(`attachments must hold at most ${MAX_ATTACHMENTS} files`);
    }
    const resolved: StoredAttachment[] = [];
    for (const [i, item] of value.entries()) {
      const field = `attachments[${i}].path`;
      const path = (item as { path?: unknown } | null)?.path;
      if (typeof path !== 'string' || path.trim() === '') {
        throw DomainError.invalid(`${field} is required and must be a string`);
      }
      resolved.push(await this.inspect(space, path, field));
    }
    return resolved;
  }

  /**
   * The messages with their attached images read (added to `meta.images`, where the context
   * builder takes a message's images from), each a copy; an image gone since is noted instead.
   */
  async withImages(space: Space, messages: Message[]): Promise<Message[]> {
    return Promise.all(
      messages.map(async (m) => {
        const attached = attachmentsOf(m.meta).filter((a) => a.image);
        if (m.role !== 'user' || attached.length === 0) return m;
        // The shape of the context builder's ImageAttachment.
        const images: Array<{ mediaType: string; data: string }> = [];
        const missing: string[] = [];
        for (const attachment of attached) {
          const data = await this.readImage(space, attachment.path);
          if (data) images.push({ mediaType: attachment.mediaType, data: data.toString('base64') });
          else missing.push(attachment.path);
        }
        const own = Array.isArray(m.meta.images) ? (m.meta.images as unknown[]) : [];
        return {
          ...m,
          meta: { ...m.meta, images: [...own, ...images], [MISSING_ATTACHMENTS_META]: missing },
        };
      }),
    );
  }

  private async inspect(space: Space, path: string, field: string): Promise<StoredAttachment> {
    const target = await this.guarded(space, path, field);
    const info = await this.files.stat(target);
    if (!info) {
      throw DomainError.notFound(`${field}: ${ArtifactErrors.fileNotFound}: ${path}`, ErrorCodes.FILE_NOT_FOUND);
    }
    if (info.kind !== 'file') throw DomainError.invalid(`${field}: ${ArtifactErrors.notAFile}: ${path}`);
    const name = basename(target.path);
    const { mimeType } = detectFileType(name, await this.files.readHead(target, SNIFF_BYTES));
    const image = ATTACHABLE_IMAGE_TYPES.includes(mimeType);
    if (image && info.size > MAX_ATTACHED_IMAGE_BYTES) {
      throw DomainError.invalid(
        `${field}: an attached image must be at most ${MAX_ATTACHED_IMAGE_BYTES / 1024 / 1024} MB (${path} has ${info.size} bytes)`,
      );
    }
    return { path: target.relativePath, name, mediaType: mimeType, size: info.size, image };
  }

  /** The path guard of the file API: inside the space, never in its `.svc` folder. */
  private async guarded(space: Space, path: string, field: string): Promise<GuardedPath> {
    let target: GuardedPath;
    try {
      target = await this.files.resolve({ roots: [space.path], base: space.path, path });
    } catch (err) {
      if (err instanceof DomainError)
        throw new DomainError(err.kind, `${field}: ${err.message}`, err.reason, err.details);
      throw err;
    }
    if (isInServiceFolder(target.realRoot, target.entry) || isInServiceFolder(target.realRoot, target.real)) {
      throw DomainError.forbidden(`${field}: ${ArtifactErrors.reserved}`);
    }
    return target;
  }

  private async readImage(space: Space, path: string): Promise<Buffer | null> {
    try {
      const target = await this.files.resolve({ roots: [space.path], base: space.path, path });
      const data = await this.files.readFile(target, MAX_ATTACHED_IMAGE_BYTES);
      return data === 'too-large' ? null : data;
    } catch {
      return null;
    }
  }
}
