/** POST and GET /api/rooms/{slug}/choose — submit or revise a choice (docs/concepts.md, Decisions and slates). */
import { z } from 'zod';
import { isSingleChoice } from '../domain/ballots.js';
import { invalidInput } from '../errors.js';
import { act, seqSelector, slugSchema } from './shared.js';
import type { OperationDef, RequestContext } from './types.js';

const choiceSchema = z.unknown().meta({
  description:
    'Single-choice: an option number ("5", "#5", 5) or exact text. Approval/ranked: an array of references. Score/quadratic: an object mapping references to numbers.',
});

const chooseInput = z
  .object({
    slug: slugSchema,
    choice: choiceSchema,
    reason: z.string().max(2000).optional(),
    rationale: z.string().max(2000).optional(),
    decision: seqSelector.optional(),
  })
  .meta({ id: 'ChooseRequest' });

type ChooseInput = z.infer<typeof chooseInput>;

const chooseOutput = z
  .object({
    ok: z.literal(true),
    slug: z.string(),
    decision: z.number().int(),
    cast_choice: z.unknown(),
    revised: z.boolean(),
    status: z.string(),
    resolved_winner: z.string().nullable(),
    resolved_outcome: z.string().nullable(),
    agreement: z.literal(true).optional(),
    settling: z.object({ seals_in_seconds: z.number(), presumptive: z.string().nullable() }).optional(),
  })
  .meta({ id: 'ChooseResponse' });

async function runChoose(ctx: RequestContext, input: ChooseInput, invalid: Error | undefined, viaGet: boolean) {
  const route = `${viaGet ? 'GET' : 'POST'} /api/rooms/${input.slug}/choose`;
  let problem = invalid;
  if (!problem && input.reason !== undefined && input.rationale !== undefined && input.reason !== input.rationale) {
    problem = invalidInput(
      'reason',
      `reason and rationale are the same field; send one of them (${route}).`,
      'invalid_value',
    );
  }
  if (!problem && input.choice === undefined) {
    problem = invalidInput('choice', `choice is required: the option number or exact text (${route}).`, 'ballot_shape');
  }
  return act(ctx, input.slug, {
    action: 'choose',
    route,
    build: (state, actor, now) => {
      if (!problem && viaGet && !isSingleChoice(state.room.config.mechanism, false)) {
        problem = invalidInput(
          'choice',
          `GET choose accepts single-choice ballots only; this room uses ${state.room.config.mechanism}: send POST ${route.slice(4)} with a JSON body instead.`,
          'ballot_shape',
        );
      }
      return {
        type: 'CHOOSE',
        now,
        actor,
        choice: input.choice,
        reason: input.reason ?? input.rationale ?? null,
        ...(input.decision !== undefined ? { decision: input.decision } : {}),
        ...(problem ? { invalid: (problem as import('../errors.js').ProtocolError).toSpec() } : {}),
      };
    },
    render: (info, state, now) => {
      const d = state.decisions.find((x) => x.data.id === info.decision_id)!;
      const sealed = d.data.seal;
      const status = sealed ? 'resolved' : 'voting';
      return {
        ok: true,
        slug: state.slug,
        decision: d.data.seq,
        cast_choice: info.cast_choice,
        revised: info.revised as boolean,
        status,
        resolved_winner: sealed?.winner ?? null,
        resolved_outcome: sealed?.outcome ?? null,
        ...(d.data.agreement ? { agreement: true } : {}),
        ...(d.phase === 'settling' && d.data.settling
          ? {
              settling: {
                seals_in_seconds: Math.max(0, Math.ceil((d.data.settling.endsAt - now) / 1000)),
                presumptive: d.data.settling.presumptive,
              },
            }
          : {}),
      };
    },
  });
}

/** A ballot's weight for a mandate's weight_cap: 1, or a quadratic ballot's total credits (docs/concepts.md, Mandates). */
async function ballotWeight(ctx: RequestContext, input: { slug: string; choice?: unknown }): Promise<number> {
  const state = await ctx.services.registry.read(input.slug);
  const choice = input.choice;
  if (
    state?.room.config.mechanism !== 'quadratic_vote' ||
    typeof choice !== 'object' ||
    choice === null ||
    Array.isArray(choice)
  )
    return 1;
  return Object.values(choice).reduce<number>(
    (sum, v) => sum + (typeof v === 'number' && Number.isFinite(v) ? v : 0),
    0,
  );
}

const description =
  'Submits or revises your ballot on the oldest open decision (or the one named by decision). Repeating is a revision, not a second ballot. A choice can complete a lock and seal the decision in the same request.';

export const choose = {
  name: 'choose',
  summary: 'Submit or revise a choice',
  description,
  tag: 'actions',
  method: 'POST',
  path: '/api/rooms/{slug}/choose',
  inputSource: 'body',
  input: chooseInput,
  output: chooseOutput,
  requestSchemaName: 'ChooseRequest',
  responseSchemaName: 'ChooseResponse',
  mutating: true,
  shownText: { reason: 'paragraphs', rationale: 'paragraphs' },
  mandateAction: 'choose',
  mandateWeight: ballotWeight,
  deferValidation: true,
  mcp: { tool: 'choose', catalogs: ['participant'] },
  handle: (ctx, input, invalid) => runChoose(ctx, input, invalid, false),
} satisfies OperationDef<ChooseInput>;

const chooseQuery = z.object({
  slug: slugSchema,
  choice: z.string().max(500_000),
  reason: z.string().max(2000).optional(),
  rationale: z.string().max(2000).optional(),
  decision: seqSelector.optional(),
});

export const chooseByGet = {
  name: 'chooseByGet',
  summary: 'Submit a single-choice ballot by query string',
  description: `For browser-bound agents that can only issue GETs. Credentials travel in headers only. Single-choice ballots only. ${description}`,
  tag: 'actions',
  method: 'GET',
  path: '/api/rooms/{slug}/choose',
  inputSource: 'query',
  input: chooseQuery,
  output: chooseOutput,
  responseSchemaName: 'ChooseResponse',
  mutating: true,
  shownText: { reason: 'paragraphs', rationale: 'paragraphs' },
  mandateAction: 'choose',
  mandateWeight: ballotWeight,
  deferValidation: true,
  handle: (ctx, input, invalid) => runChoose(ctx, input, invalid, true),
} satisfies OperationDef<z.infer<typeof chooseQuery>>;
