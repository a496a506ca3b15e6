/**
 * Secrets the service mints and how it keeps them: raw values are returned once and stored only as
 * SHA-256 hashes (docs/concepts.md, Credentials); room passwords get a slow salted hash (scrypt).
 */
import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { addressGroup } from './client-address.js';
import { PasswordCheckQueue } from './password-checks.js';

export function randomToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/**
 * New room passwords: N = 2^15, r = 8 (32 MiB and roughly 60–120 ms of one thread-pool thread per
 * check). Wrong guesses are throttled (guess-throttle.ts), and a right password is checked once per
 * process and then remembered (see `remembered` below), so the cost stays bounded for everyone.
 * Every hash, made or checked, takes a slot of `passwordChecks` (password-checks.ts): a few at once,
 * a 429 past them, the quietest client first, so guessing from many addresses can neither take the
 * thread pool nor push a rightful join to the back of the line.
 * The parameters are stored with each hash, so hashes made with N = 2^14 keep verifying.
 */
const SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;

const passwordChecks = new PasswordCheckQueue();

/**
 * Who asks for a hash: the client's address group (client-address.ts), so the queue can put a client
 * that has not been hashing ahead of one that keeps guessing. Omitted, every caller shares one.
 */
export type PasswordRequester = string | undefined;

function scryptAsync(
  password: string,
  salt: Buffer,
  params: ScryptParams,
  requester: PasswordRequester,
): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; node's default ceiling (32 MiB) is just below N = 2^15, r = 8.
  const maxmem = 256 * params.N * params.r * params.p;
  return passwordChecks.run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password, salt, KEY_BYTES, { ...params, maxmem }, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
    requester === undefined ? '' : addressGroup(requester),
  );
}

export async function hashPassword(password: string, requester?: PasswordRequester): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT, requester);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Stored parameters within what the service ever wrote (2^14 ≤ N ≤ 2^17), or null. */
function storedParams(nText: string | undefined, rText: string | undefined, pText: string | undefined) {
  const [N, r, p] = [Number(nText), Number(rText), Number(pText)];
  const powerOfTwo = Number.isInteger(N) && N >= 2 ** 14 && N <= 2 ** 17 && (N & (N - 1)) === 0;
  return powerOfTwo && r >= 1 && r <= 16 && p >= 1 && p <= 4 && Number.isInteger(r) && Number.isInteger(p)
    ? { N, r, p }
    : null;
}

/**
 * Passwords this process has verified, as HMACs under a key that never leaves memory: a reader who
 * sends the right X-Room-Password on every poll pays scrypt once, not on every request. A wrong
 * password is never remembered; at most REMEMBERED_MAX entries, the oldest dropped first.
 */
const rememberKey = randomBytes(32);
const remembered = new Set<string>();
const REMEMBERED_MAX = 10_000;
/**
 * Checks in progress, by the same key: agents of one host that join a room with its password at the
 * same instant share one hash instead of each taking a slot (and most of them a 429).
 */
const checking = new Map<string, Promise<boolean>>();

function rememberedAs(password: string, stored: string): string {
  return createHmac('sha256', rememberKey).update(stored).update('\0').update(password).digest('base64url');
}

/** `requester` is the client's address (any form; grouped here), for the hashing queue's order. */
export async function verifyPassword(
  password: string,
  stored: string,
  requester?: PasswordRequester,
): Promise<boolean> {
  const [scheme, nText, rText, pText, saltText, keyText] = stored.split('$');
  const params = storedParams(nText, rText, pText);
  if (scheme !== 'scrypt' || !params || !saltText || !keyText) return false;
  const memo = rememberedAs(password, stored);
  if (remembered.has(memo)) return true;
  const pending = checking.get(memo);
  if (pending) return pending;
  const check = (async () => {
    const expected = Buffer.from(keyText, 'base64url');
    const actual = await scryptAsync(password, Buffer.from(saltText, 'base64url'), params, requester);
    const ok = actual.length === expected.length && timingSafeEqual(actual, expected);
    if (ok) {
      if (remembered.size >= REMEMBERED_MAX) remembered.delete(remembered.values().next().value!);
      remembered.add(memo);
    }
    return ok;
  })();
  checking.set(memo, check);
  try {
    return await check;
  } finally {
    checking.delete(memo);
  }
}
