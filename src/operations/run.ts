/**
 * Runs an operation for a transport (REST route or MCP tool), once its input is parsed: a presented
 * mandate is verified first, for this operation's action and room (docs/concepts.md, Mandates), and a
 * successful mutating call under a mandate is counted toward its rate cap (docs/concepts.md, Mandates).
 */
import { roomUrl } from '../runtime/sealing.js';
import { recordMandateCall, verifyMandate } from '../auth/mandates.js';
import { rememberProven } from '../auth/known-credentials.js';
import { credentialRateKey } from '../auth/rate-limit.js';
import { within } from '../runtime/within.js';
import { ProtocolError } from '../errors.js';
import { guessIn } from '../auth/guess-throttle.js';
import type { AnyOperation, RequestContext } from './types.js';

export async function runOperation(
  operation: AnyOperation,
  ctx: RequestContext,
  input: unknown,
  invalid: ProtocolError | undefined,
): Promise<Record<string, unknown>> {
  const guess = guessIn(ctx, input);
  const guesses = ctx.services.guesses;
  if (guess === null || !guesses) return runChecked(operation, ctx, input, invalid);
  return guesses.guard(guess, () => runChecked(operation, ctx, input, invalid));
}

async function runChecked(
  operation: AnyOperation,
  ctx: RequestContext,
  input: unknown,
  invalid: ProtocolError | undefined,
): Promise<Record<string, unknown>> {
  const { services } = ctx;
  const jws = ctx.credentials.mandate;
  if (jws === undefined || !services.mandates) return learningCredentials(operation, ctx, input, invalid);

  const slug = (input as { slug?: unknown }).slug;
  const roomSlug = typeof slug === 'string' ? slug : null;
  const weight = invalid === undefined ? await operation.mandateWeight?.(ctx, input) : undefined;
  const verified = await observedVerification(
    services,
    jws,
    {
      now: services.clock.now(),
      roomSlug,
      roomUrl: roomSlug === null ? null : roomUrl(services.baseUrl, roomSlug),
      action: operation.mandateAction ?? null,
      ...(weight !== undefined ? { weight } : {}),
      mutating: operation.mutating,
    },
    services.mandates,
  ).catch(async (error: unknown) => {
    await forgetStale(ctx, jws, error);
    throw error;
  });
  ctx.credentials.verified = verified;
  const result = await learningCredentials(operation, ctx, input, invalid);
  if (operation.mutating && !ctx.replayed)
    await recordMandateCall(services.mandates.rateCaps, verified, services.clock.now());
  return result;
}

/** verifyMandate, its result (ok, or the refusal's code) counted for the metrics. */
async function observedVerification(
  services: RequestContext['services'],
  ...args: Parameters<typeof verifyMandate>
): Promise<Awaited<ReturnType<typeof verifyMandate>>> {
  try {
    const verified = await verifyMandate(...args);
    services.observer?.mandateVerification('ok');
    return verified;
  } catch (error) {
    services.observer?.mandateVerification(error instanceof ProtocolError ? error.code : 'internal.error');
    throw error;
  }
}

const REMEMBER_WAIT_MS = 100;

/** Verification failures that say the token itself is no good (not how it was used: scope, caps). */
const STALE_MANDATE = new Set([
  'mandate.malformed',
  'mandate.issuer_untrusted',
  'mandate.signature_invalid',
  'mandate.expired',
  'mandate.not_yet_valid',
  'mandate.revoked',
]);

/**
 * A presented mandate that no longer verifies is forgotten by the rate limits (docs/architecture.md,
 * Rate limits by caller): a copy replayed after it expired or was revoked then counts on the
 * replaying address, never again on its subject's budget. Best effort, like remembering.
 */
export async function forgetStale(ctx: RequestContext, jws: string, error: unknown): Promise<void> {
  const known = ctx.services.requestRates?.known;
  if (!known || !(error instanceof ProtocolError) || !STALE_MANDATE.has(error.code)) return;
  const key = credentialRateKey({ mandate: jws });
  if (key === null) return;
  const forgetting = known.forget(key).catch(() => undefined);
  await (known.inProcess ? forgetting : within(forgetting, REMEMBER_WAIT_MS, () => undefined));
}

/**
 * Runs the handler, then tells the rate limits which credentials this call proved real
 * (docs/architecture.md, Rate limits by caller): the presented one when it matched a seat — or when
 * a verified mandate has just taken one — and every token the answer hands out. Proven even when
 * the act itself then fails. Best effort: a store that cannot record only leaves the credential
 * counted by address a little longer.
 */
async function learningCredentials(
  operation: AnyOperation,
  ctx: RequestContext,
  input: unknown,
  invalid: ProtocolError | undefined,
): Promise<Record<string, unknown>> {
  const known = ctx.services.requestRates?.known;
  if (!known) return operation.handle(ctx, input, invalid);
  let result: Record<string, unknown> | undefined;
  try {
    result = await operation.handle(ctx, input, invalid);
    return result;
  } finally {
    const joined = result !== undefined && operation.name === 'joinRoom' && ctx.credentials.verified !== undefined;
    const minted = [result?.participant_token, result?.creator_token].filter((t): t is string => typeof t === 'string');
    const remembering = rememberProven(known, ctx.credentials, ctx.credentials.seatProven === true || joined, minted);
    // A slow store delays the answer by REMEMBER_WAIT_MS at most; the write itself runs on. An
    // in-process table answers at once: no timer to race.
    const settled = remembering.catch(() => undefined);
    await (known.inProcess ? settled : within(settled, REMEMBER_WAIT_MS, () => undefined));
  }
}
