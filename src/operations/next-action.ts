/** GET /api/rooms/{slug}/next-action — the long-poll (docs/agents.md, The REST loop); MCP `wait` and `wait_outcome`. */
import { z } from 'zod';
import { authRequired } from '../auth/caller.js';
import { authorizeRead } from '../auth/read-gate.js';
import type { WaitMode } from '../engagement/actionable.js';
import { watchCredential } from '../engagement/credential-watch.js';
import { sinceSeqSchema } from '../engagement/cursor.js';
import { parkingClaim } from '../engagement/capacity.js';
import { MAX_WAIT_SECONDS } from '../engagement/long-poll.js';
import { awaitNextActionSchema } from '../domain/views/schemas.js';
import { roomNotFound } from '../runtime/registry.js';
import { readerOf, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const DEFAULT_WAIT_SECONDS = 25;

const nextActionInput = z.object({
  slug: slugSchema,
  wait: z
    .union([z.number(), z.string().regex(/^[0-9]+(\.[0-9]+)?$/, 'must be a number of seconds')])
    .transform(Number)
    .pipe(z.number().min(0))
    .optional()
    .describe(
      `Seconds to wait before answering with a timeout (default ${DEFAULT_WAIT_SECONDS}; larger values are clamped to ${MAX_WAIT_SECONDS}).`,
    ),
  for: z
    .enum(['my_choice', 'my_vote', 'completion', 'activity'])
    .optional()
    .describe(
      'What to wait for: my_choice (default; my_vote is an alias) a decision that needs your choice; activity also the first act by someone else after since_seq; completion a decision above since_seq sealing.',
    ),
  since_seq: sinceSeqSchema
    .optional()
    .describe(
      'for=completion: the decision number already seen (default 0); for=activity: the event seq already seen (default: the latest).',
    ),
});

export const nextAction = {
  name: 'awaitNextAction',
  summary: 'Wait until the room needs you',
  description:
    'Long-poll. Answers at once when something is actionable, otherwise as soon as a commit makes it so, otherwise with {status: "timeout"} after wait seconds (a normal answer: call again). A for=my_choice wait that no open decision can end (they sealed, or their electorates leave you out) answers the timeout at once, its hint saying so: read the outcome, then wait for the next decision with for=activity and since_seq. for=my_choice wakes when a decision needs your choice (and once when a decision you opened seals); for=activity also wakes on the first substantive event by someone else after since_seq; for=completion wakes when a decision with seq > since_seq seals.',
  tag: 'events',
  method: 'GET',
  path: '/api/rooms/{slug}/next-action',
  inputSource: 'query',
  input: nextActionInput,
  output: awaitNextActionSchema,
  responseSchemaName: 'AwaitNextActionResponse',
  mutating: false,
  noStore: true,
  example: { input: { slug: 'k7mq2xw9pa', wait: 25 } },
  mcp: { tool: 'wait', catalogs: ['participant'], readOnly: true },
  async handle(ctx, input) {
    const { services } = ctx;
    const route = `GET /api/rooms/${input.slug}/next-action`;
    // Waiting needs a token or a mandate; a room password alone is not enough (docs/agents.md, The REST loop).
    if (!ctx.credentials.bearer && !ctx.credentials.mandate) throw authRequired('wait', route);
    const state = await services.registry.read(input.slug);
    if (!state) throw roomNotFound(input.slug);
    const caller = await authorizeRead(state, ctx.credentials, services.auth, ctx.clientIp);
    const mode: WaitMode = input.for === undefined || input.for === 'my_vote' ? 'my_choice' : input.for;
    const sinceSeq = input.since_seq ?? (mode === 'activity' ? state.head : 0);
    return services.engagement.longPoll({
      slug: input.slug,
      query: { mode, reader: readerOf(state, caller), sinceSeq },
      waitSeconds: Math.min(input.wait ?? DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS),
      claim: parkingClaim(ctx.clientIp, ctx.credentials),
      signal: ctx.signal,
      answer: ctx.answerWoken,
      // A superseded token or revoked mandate ends the wait at the next commit (docs/architecture.md).
      watch: watchCredential(services, input.slug, state, ctx.credentials),
    });
  },
} satisfies OperationDef<z.infer<typeof nextActionInput>>;
