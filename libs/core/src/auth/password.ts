/** Generated access passwords: 12 characters, upper, lower and digit, no look-alikes. */

const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ'; // no I, O
const LOWER = 'abcdefghijkmnpqrstuvwxyz'; // no l, o
const DIGITS = '23456789'; // no 0, 1
const ALL = UPPER + LOWER + DIGITS;
export const GENERATED_PASSWORD_LENGTH = 12;

/** `randomInt(max)` returns an unbiased integer in [0, max); pass crypto.randomInt. */
export function generatePassword(randomInt: (max: number) => number): string {
  const chars = [pick(UPPER, randomInt), pick(LOWER, randomInt), pick(DIGITS, randomInt)];
  while (chars.length < GENERATED_PASSWORD_LENGTH) chars.push(pick(ALL, randomInt));
  // Fisher–Yates so the guaranteed classes are not always first.
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}

function pick(alphabet: string, randomInt: (max: number) => number): string {
  return alphabet[randomInt(alphabet.length)]!;
}
