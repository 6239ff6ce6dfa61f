import { hash, timingSafeEqual } from 'node:crypto';

/** Candidates of up to this many UTF-8 bytes are compared padded to it; longer ones by digest. */
export const PADDED_BYTES = 256;

/**
 * Whether a candidate is one secret, in a time that depends on neither the secret's content nor
 * its length. A candidate of at most PADDED_BYTES bytes is written into a zeroed buffer of that
 * size and compared with the secret padded the same way (`timingSafeEqual`), and the byte
 * lengths are compared apart (a candidate that is the secret plus NULs is not the secret). A
 * longer candidate, or every candidate when the secret itself is longer, is compared by SHA-256
 * digest (hashing makes the lengths equal). The padded compare is a fraction of a microsecond;
 * a digest per request was ~5 % of the CPU of a simple authenticated read.
 */
export class SecretMatcher {
  private readonly length: number;
  private readonly digest: Buffer;
  /** The secret padded with zeros to PADDED_BYTES, when it fits. */
  private readonly padded: Buffer | null;
  /** Each candidate written here in turn (checks are synchronous: one at a time). */
  private readonly scratch = Buffer.alloc(PADDED_BYTES);

  constructor(secret: string) {
    this.length = Buffer.byteLength(secret, 'utf8');
    this.digest = sha256(secret);
    this.padded = this.length <= PADDED_BYTES ? Buffer.alloc(PADDED_BYTES) : null;
    this.padded?.write(secret, 'utf8');
  }

  matches(candidate: string): boolean {
    const length = Buffer.byteLength(candidate, 'utf8');
    if (this.padded === null || length > PADDED_BYTES) return timingSafeEqual(sha256(candidate), this.digest);
    this.scratch.fill(0);
    this.scratch.write(candidate, 'utf8');
    const sameBytes = timingSafeEqual(this.scratch, this.padded);
    const sameLength = length === this.length;
    return sameBytes && sameLength;
  }
}

function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}
