/** POST, GET /api/rooms/{slug}/webhooks and DELETE /webhooks/{id} (docs/agents.md, The REST loop). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { authRequired, resolveCaller } from '../auth/caller.js';
import { addressGroup } from '../auth/client-address.js';
import { joinRequired } from '../auth/read-gate.js';
import { hashSecret } from '../auth/secrets.js';
import type { RoomState } from '../domain/state.js';
import { iso } from '../domain/views/common.js';
import { EVENT_TYPES } from '../engagement/event-types.js';
import { parseWebhookUrl, resolveTarget, WebhookTargetRejected } from '../engagement/ssrf.js';
import { newSigningSecret } from '../engagement/webhook-signing.js';
import { invalidInput, protocolError } from '../errors.js';
import { replayedElsewhere } from '../runtime/idempotency-seal.js';
import { Mailbox } from '../runtime/mailbox.js';
import { idempotencyConflict, roomNotFound } from '../runtime/registry.js';
import { DISABLE_REASONS, originOf, seatOwner, type WebhookRecord } from '../store/engagement-port.js';
import { idempotencyFor, slugSchema } from './shared.js';
import type { OperationDef, RequestContext } from './types.js';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/**
 * Registrations of one room run one at a time in this process, so the cap and the idempotent replay
 * are checked against every registration before them. Across processes sharing a Redis store, a room
 * can end at most one registration per other process past the cap.
 */
const registrations = new Mailbox();

const registerInput = z
  .object({
    slug: slugSchema,
    url: z
      .string()
      .min(1)
      .describe('Where to POST events: an absolute http(s) URL of at most 2048 characters, without user:password.'),
    event_types: z
      .array(z.enum(EVENT_TYPES))
      .max(EVENT_TYPES.length * 2)
      .optional()
      .describe('The event types to deliver; omitted or empty: all.'),
  })
  .meta({ id: 'RegisterWebhookRequest', description: 'A webhook subscription.' });

const registerOutput = z
  .object({
    ok: z.literal(true).describe('Always true on success.'),
    webhook_id: z.string().describe('The subscription id, to unregister it.'),
    signing_secret: z
      .string()
      .describe('Shown only now: the Standard Webhooks secret (whsec_…) that verifies deliveries.'),
    url: z.string().describe('Where events are POSTed.'),
    event_types: z.array(z.string()).describe('The event types delivered; empty: all.'),
  })
  .meta({ id: 'RegisterWebhookResponse', description: 'The subscription and its one-time signing secret.' });

const webhookView = z
  .object({
    id: z.string().describe('The subscription id.'),
    url: z.string().describe('Where events are POSTed.'),
    event_types: z.array(z.string()).describe('The event types delivered; empty: all.'),
    created_at: z.string().describe('When it was registered (RFC 3339, UTC).'),
    disabled_at: z
      .string()
      .nullable()
      .describe(
        'When deliveries were stopped: unregistered, refused, failing or its owner shut out (RFC 3339, UTC); null while active.',
      ),
    disabled_reason: z
      .enum(DISABLE_REASONS)
      .nullable()
      .describe(
        'Why deliveries stopped: unregistered; verification_refused (a redirect or 4xx to the verification delivery); verification_unanswered (no 2xx to it in time); gone (a 404 or 410); refused (3 refusals in a row); exhausted (3 events in a row failed every attempt); owner_access_lost (the owner seat can no longer read the room: the config.auth of the room now refuses its credential, as token_only does a mandate seat and mandate_required a token seat other than the creator seat). Null while active.',
      ),
    verified_at: z
      .string()
      .nullable()
      .describe(
        'When the receiver consented by answering 2xx to the verification delivery (RFC 3339, UTC); null until then, and no room event is sent before.',
      ),
  })
  .meta({ id: 'Webhook', description: 'A webhook subscription (without its secret).' });

/** Who is asking: the owner key a subscription records, and whether the caller is an operator. */
async function webhookCaller(
  ctx: RequestContext,
  slug: string,
  action: string,
  route: string,
): Promise<{ state: RoomState; owner: string; operator: boolean }> {
  const { services } = ctx;
  if (!ctx.credentials.bearer && !ctx.credentials.mandate) throw authRequired(action, route);
  const state = await services.registry.read(slug);
  if (!state) throw roomNotFound(slug);
  const caller = resolveCaller(state, ctx.credentials, services.auth);
  if (caller.kind === 'admin') return { state, owner: 'operator', operator: true };
  if (caller.kind === 'member') {
    // A mandate is never an operator credential, even for the creator's seat.
    const operator = caller.member.isCreator && caller.mandate === null;
    return { state, owner: seatOwner(caller.member.id), operator };
  }
  // A valid mandate whose subject holds no seat: subscriptions belong to members.
  if (caller.kind === 'outsider') throw joinRequired(state);
  throw authRequired(action, route);
}

function registration(hook: WebhookRecord) {
  return {
    ok: true as const,
    webhook_id: hook.id,
    signing_secret: hook.secret,
    url: hook.url,
    event_types: hook.event_types,
  };
}

async function checkUrl(text: string, allowPrivate: boolean, route: string): Promise<void> {
  try {
    await resolveTarget(parseWebhookUrl(text), allowPrivate);
  } catch (error) {
    if (!(error instanceof WebhookTargetRejected)) throw error;
    throw invalidInput(
      'url',
      `The webhook URL was rejected: ${error.message}. Send an absolute http(s) URL of a public host, without userinfo (the register_webhook action / ${route}).`,
      'webhook_url_rejected',
    );
  }
}

function capReached(slug: string, cap: number, route: string) {
  return invalidInput(
    'url',
    `Room ${slug} already has ${cap} active webhooks, the most one room may hold. Unregister one you no longer need (DELETE /api/rooms/${slug}/webhooks/{id}; GET /api/rooms/${slug}/webhooks lists yours), or send events to one receiver that fans them out (the register_webhook action / ${route}).`,
    'webhook_cap_reached',
    { cap },
  );
}

function seatCapReached(slug: string, cap: number, route: string) {
  return invalidInput(
    'url',
    `You already hold ${cap} active webhooks in room ${slug}, the most one seat may hold. Unregister one you no longer need (DELETE /api/rooms/${slug}/webhooks/{id}; GET /api/rooms/${slug}/webhooks lists yours), or send events to one receiver that fans them out (the register_webhook action / ${route}).`,
    'webhook_seat_cap_reached',
    { cap },
  );
}

const ORIGIN_SCOPES = {
  room: 'from this room, the most one receiving origin may',
  address:
    'awaiting its consent from this client address, the most one address may hold for one receiving origin (each stops counting once the receiver answers its verification delivery with a 2xx)',
  service: 'from this service, the most one receiving origin may',
} as const;

function originCapReached(slug: string, origin: string, cap: number, scope: keyof typeof ORIGIN_SCOPES, route: string) {
  return invalidInput(
    'url',
    `${origin} already receives ${cap} active webhooks ${ORIGIN_SCOPES[scope]}. Unregister one you no longer need (DELETE /api/rooms/${slug}/webhooks/{id}), or have one URL of that receiver take the events and fan them out (the register_webhook action / ${route}).`,
    'webhook_origin_cap_reached',
    { cap, origin, scope },
  );
}

/**
 * Who registers a subscription, for the per-address share of an origin: the client's address group
 * (an IPv6 /64, auth/client-address.ts), hashed so the store keeps no address.
 */
function webhookClient(clientIp: string): string {
  return hashSecret(`webhook-client\n${addressGroup(clientIp)}`);
}

/**
 * The registration limits: per room, per seat in the room, per receiving origin in the room, per
 * origin and client address, and per origin across the service (docs/agents.md, Webhooks). Only active
 * subscriptions count. The address's share keeps one client, registering from rooms of its own, from
 * holding the whole service-wide budget of a receiver that others use too.
 */
async function checkLimits(
  services: RequestContext['services'],
  existing: readonly WebhookRecord[],
  slug: string,
  owner: string,
  url: string,
  client: string,
  route: string,
): Promise<void> {
  const settings = services.engagement.settings;
  const active = existing.filter((w) => w.disabled_at === null);
  if (active.length >= settings.webhookMaxPerRoom) throw capReached(slug, settings.webhookMaxPerRoom, route);
  if (active.filter((w) => w.owner === owner).length >= settings.webhookMaxPerSeat) {
    throw seatCapReached(slug, settings.webhookMaxPerSeat, route);
  }
  const origin = originOf(url);
  if (active.filter((w) => originOf(w.url) === origin).length >= settings.webhookMaxPerOriginPerRoom) {
    throw originCapReached(slug, origin, settings.webhookMaxPerOriginPerRoom, 'room', route);
  }
  if (await services.store.engagement.originHeldBy(origin, client, settings.webhookMaxPerOriginPerAddress)) {
    throw originCapReached(slug, origin, settings.webhookMaxPerOriginPerAddress, 'address', route);
  }
  if (await services.store.engagement.originFull(origin, settings.webhookMaxPerOrigin)) {
    throw originCapReached(slug, origin, settings.webhookMaxPerOrigin, 'service', route);
  }
}

function roomClosed(state: RoomState) {
  return protocolError(
    'room.concluded',
    `Room ${state.slug} is closed and read-only: nothing more will happen in it, so there is nothing to subscribe to. Its records stay readable (GET /api/rooms/${state.slug}/events).`,
    {
      hint: 'Read the events or the outcome instead.',
      details: { slug: state.slug, concluded_at: iso(state.room.conclusion?.at) },
    },
  );
}

export const registerWebhook = {
  name: 'registerWebhook',
  summary: 'Register a webhook',
  description:
    'Subscribes a URL to the room\'s events (all, or the listed event_types). Deliveries are POSTs of {slug, event} signed with Webhook-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<body>"> keyed by the signing_secret, which is returned only here; a service run with WEBHOOK_STANDARD_SIGNATURE=true appends Standard Webhooks entries after a space, so new Webhook(signing_secret) of the standardwebhooks package verifies too. Consent first: one signed verification delivery (event_type "vendor:conclave:webhook.verification", seq 0, no room content) goes to the URL, and room events follow only after a 2xx to it; a redirect, a 4xx or no answer disables the subscription. Later, a 404/410 disables it at once and 3 refusals (3xx/4xx) in a row too; failures are retried with backoff for about 32 hours, and 3 consecutive events failing every attempt disable it. A subscription belongs to the seat that registered it (or the operator): once the config.auth of the room refuses the credential kind of that seat (update_room_settings), its subscriptions are disabled (owner_access_lost) before any later event is sent, and stay disabled if the setting changes back (list_webhooks shows verified_at and disabled_reason). Active webhooks are limited per room (WEBHOOK_MAX_PER_ROOM, 2,000), per seat (WEBHOOK_MAX_PER_SEAT, 20) and per receiving origin (WEBHOOK_MAX_PER_ORIGIN_PER_ROOM, 20; WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS from one client address across the service, of those still awaiting consent, 20; WEBHOOK_MAX_PER_ORIGIN across the service, 200); past one, registration is refused until one is unregistered.',
  tag: 'events',
  method: 'POST',
  path: '/api/rooms/{slug}/webhooks',
  inputSource: 'body',
  input: registerInput,
  output: registerOutput,
  requestSchemaName: 'RegisterWebhookRequest',
  responseSchemaName: 'RegisterWebhookResponse',
  mutating: true,
  example: {
    input: { slug: 'k7mq2xw9pa', url: 'https://agent.example.com/hooks/conclave', event_types: ['decision.completed'] },
  },
  mcp: { tool: 'register_webhook', catalogs: ['host'] },
  async handle(ctx, input) {
    const { services } = ctx;
    const route = `POST /api/rooms/${input.slug}/webhooks`;
    const { state, owner } = await webhookCaller(ctx, input.slug, 'register_webhook', route);
    if (state.concluded) throw roomClosed(state);
    return registrations.run(input.slug, async () => {
      const now = services.clock.now();
      const idempotency = idempotencyFor(ctx, input.slug) ?? null;
      const existing = await services.store.engagement.webhooks(input.slug);
      if (idempotency) {
        const prior = existing.find(
          (w) => w.idempotency?.scope === idempotency.scope && now - w.created_at < IDEMPOTENCY_TTL_MS,
        );
        if (prior) {
          // The replay hands over the signing secret: only to the address that registered it.
          const verdict = idempotency.seal.compareBound(prior.idempotency?.fingerprint ?? '', idempotency.fingerprint);
          if (verdict === 'other_request') throw idempotencyConflict();
          if (verdict === 'other_address') throw replayedElsewhere();
          ctx.replayed = true;
          return registration(prior);
        }
      }
      await checkUrl(input.url, services.engagement.settings.webhookAllowPrivate, route);
      const client = webhookClient(ctx.clientIp);
      await checkLimits(services, existing, input.slug, owner, input.url, client, route);
      const hook: WebhookRecord = {
        id: randomUUID(),
        slug: input.slug,
        owner,
        url: input.url,
        event_types: [...new Set(input.event_types ?? [])],
        secret: newSigningSecret(),
        created_at: now,
        disabled_at: null,
        disabled_reason: null,
        // Nothing of the room goes to it before its receiver answers the verification delivery.
        verified_at: null,
        cursor: state.head,
        failure_streak: 0,
        refusal_streak: 0,
        // Only the scope and the keyed, address-bound fingerprint are stored, never the seal.
        idempotency: idempotency && {
          scope: idempotency.scope,
          fingerprint: idempotency.seal.addressBoundFingerprint(idempotency.fingerprint),
        },
        client,
      };
      await services.store.engagement.createWebhook(hook);
      // Events committed since the head was read are enqueued now rather than at the next commit.
      services.engagement.webhooks.noteCommit(input.slug);
      return registration(hook);
    });
  },
} satisfies OperationDef<z.infer<typeof registerInput>>;

const listInput = z.object({ slug: slugSchema });

export const listWebhooks = {
  name: 'listWebhooks',
  summary: 'List webhooks',
  description:
    "The caller's own subscriptions in this room (every subscription for an operator credential), disabled ones included. Secrets are never shown again.",
  tag: 'events',
  method: 'GET',
  path: '/api/rooms/{slug}/webhooks',
  inputSource: 'query',
  input: listInput,
  output: z
    .object({
      slug: z.string().describe('The room slug.'),
      webhooks: z.array(webhookView).describe('Your subscriptions in the room.'),
    })
    .meta({ id: 'ListWebhooksResponse', description: 'Your webhooks in the room.' }),
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa' } },
  mcp: { tool: 'list_webhooks', catalogs: ['host'], readOnly: true },
  async handle(ctx, input) {
    const route = `GET /api/rooms/${input.slug}/webhooks`;
    const { owner, operator } = await webhookCaller(ctx, input.slug, 'list_webhooks', route);
    const hooks = await ctx.services.store.engagement.webhooks(input.slug);
    return {
      slug: input.slug,
      webhooks: hooks
        .filter((w) => operator || w.owner === owner)
        .map((w) => ({
          id: w.id,
          url: w.url,
          event_types: w.event_types,
          created_at: iso(w.created_at),
          disabled_at: iso(w.disabled_at),
          disabled_reason: w.disabled_reason,
          verified_at: iso(w.verified_at),
        })),
    };
  },
} satisfies OperationDef<z.infer<typeof listInput>>;

const unregisterInput = z.object({ slug: slugSchema, id: z.string().min(1).max(100).describe('Webhook id') });

export const unregisterWebhook = {
  name: 'unregisterWebhook',
  summary: 'Unregister a webhook',
  description:
    'Disables a subscription (soft delete: it stays listed with disabled_at, and nothing more is delivered). Repeating it succeeds again. Owner or operator only.',
  tag: 'events',
  method: 'DELETE',
  path: '/api/rooms/{slug}/webhooks/{id}',
  inputSource: 'none',
  input: unregisterInput,
  output: z
    .object({ ok: z.literal(true).describe('Always true: the subscription is gone (or never existed).') })
    .meta({ id: 'UnregisterWebhookResponse', description: 'The subscription is gone.' }),
  mutating: true,
  example: { input: { slug: 'k7mq2xw9pa', id: 'wh_3k9d2m' } },
  mcp: { tool: 'unregister_webhook', catalogs: ['host'], destructive: true, idempotent: true },
  async handle(ctx, input) {
    const { services } = ctx;
    const route = `DELETE /api/rooms/${input.slug}/webhooks/${input.id}`;
    const { owner, operator } = await webhookCaller(ctx, input.slug, 'unregister_webhook', route);
    const hook = (await services.store.engagement.webhooks(input.slug)).find((w) => w.id === input.id);
    if (!hook) {
      throw protocolError(
        'vendor:conclave:not_found',
        `Room ${input.slug} has no webhook ${input.id}. List the room's webhooks with GET /api/rooms/${input.slug}/webhooks.`,
        { details: { path: `/api/rooms/${input.slug}/webhooks/${input.id}` } },
      );
    }
    if (!operator && hook.owner !== owner) {
      throw protocolError(
        'authority.denied',
        `Only the webhook's owner or the room operator can unregister webhook ${input.id} (${route}).`,
        { details: { authority: 'webhook_owner', required: 'owner or operator' } },
      );
    }
    await services.store.engagement.disableWebhook(input.slug, input.id, services.clock.now(), 'unregistered');
    return { ok: true };
  },
} satisfies OperationDef<z.infer<typeof unregisterInput>>;
