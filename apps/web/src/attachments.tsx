import type { MessageAttachmentDto } from '#contracts/conversations.js';
import { useEffect, useState } from 'preact/hooks';
import { api, q } from './api.js';
import type { Space } from './spaces.js';

/**
 * Files sent with a chat message (docs/web-app.md, "Attachments"): uploaded into the space's
 * `attachments/` folder first, then sent by path, so a message is no longer limited by the
 * 100 KB body that base64 images had to fit in.
 */

/** Photos longer than this on either side are downscaled in the browser before upload. */
export const MAX_IMAGE_SIDE = 2048;
/** The server hands an attached image of at most 5 MB to the model (docs/api.md, "Attachments"). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const ATTACHMENTS_FOLDER = 'attachments';
/** The image types the server gives the model as images; any other file is named for it to Read. */
export const MODEL_IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** What a canvas can redraw without losing anything that matters (a GIF may be animated). */
const RESIZABLE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];

/**
 * The file as it will be uploaded: a photo longer than MAX_IMAGE_SIDE (or heavier than the
 * server takes) is redrawn on a canvas at most that long and re-encoded, PNG as WebP (it may be
 * transparent), anything else as JPEG; any other file, or an image that cannot be decoded, as is.
 */
export async function downscaled(file: File): Promise<File> {
  if (!RESIZABLE_TYPES.includes(file.type)) return file;
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return file;
  }
  const longSide = Math.max(bitmap.width, bitmap.height);
  if (longSide <= MAX_IMAGE_SIDE && file.size <= MAX_IMAGE_BYTES) {
    bitmap.close();
    return file;
  }
  const scale = Math.min(1, MAX_IMAGE_SIDE / longSide);
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const wanted = file.type === 'image/png' ? 'image/webp' : 'image/jpeg';
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, wanted, 0.85));
  if (!blob) return file;
  // A browser that cannot encode WebP answers PNG.
  const extension = blob.type === 'image/webp' ? 'webp' : blob.type === 'image/png' ? 'png' : 'jpg';
  return new File([blob], `${file.name.replace(/\.[^.]*$/, '') || 'image'}.${extension}`, { type: blob.type });
}

/** A new path in the attachments folder: unique, keeping a safe form of the file's name. */
export function attachmentPath(name: string): string {
  const safe =
    name
      .normalize('NFC')
      .replace(/[^\p{L}\p{N}._-]+/gu, '_')
      .replace(/^\.+/, '')
      .slice(-80) || 'file';
  const unique = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return `${ATTACHMENTS_FOLDER}/${unique}-${safe}`;
}

/** Uploads a file into the space's attachments folder (made when missing); its path there. */
export async function uploadAttachment(
  spaceId: string,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<MessageAttachmentDto> {
  const base = `/api/spaces/${spaceId}/artifacts`;
  // Already there is fine (409): the upload says so if the folder really is missing.
  await api.post(`${base}/folder`, { name: ATTACHMENTS_FOLDER, parentPath: '' }).catch(() => undefined);
  const path = attachmentPath(file.name);
  await api.uploadWithProgress(`${base}/upload?path=${q(path)}`, file, onProgress);
  return {
    path,
    name: path.slice(ATTACHMENTS_FOLDER.length + 1),
    mediaType: file.type || 'application/octet-stream',
    size: file.size,
    image: MODEL_IMAGE_TYPES.includes(file.type),
  };
}

/**
 * A file a stored message was sent with: an image read from the space (the download
 * operation, token in the header) and shown, any other file (or an image since removed) by name.
 */
export function SentAttachment(props: { space: Space; attachment: MessageAttachmentDto; index: number }) {
  const { attachment } = props;
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!attachment.image) return;
    let live = true;
    let made: string | null = null;
    api.blob(`/api/artifacts/download?path=${q(`${props.space.path}/${attachment.path}`)}`).then(
      (blob) => {
        if (!live) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      () => undefined,
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [props.space.path, attachment.path, attachment.image]);
  if (url) return <img src={url} alt={`Attached image ${props.index + 1}`} title={attachment.path} />;
  return (
    <span class="attachment-file" title={attachment.path}>
      📎 {attachment.name}
    </span>
  );
}
