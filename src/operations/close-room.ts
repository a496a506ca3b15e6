/** POST /api/rooms/{slug}/close — conclude the room; the conclusion receipt chains to the head (docs/concepts.md, Rooms). */
import { z } from 'zod';
import { iso } from '../domain/views/common.js';
import { act, slugSchema } from './shared.js';
import type { OperationDef } from './types.js';

const closeInput = z
  .object({
    slug: slugSchema,
    statement: z
      .string()
      .max(10_000)
      .optional()
      .describe('A closing statement, signed into the conclusion receipt (at most 10 000 characters).'),
  })
  .meta({ id: 'CloseRequest', description: 'Conclude the room.' });

export const closeRoom = {
  name: 'closeRoom',
  summary: 'Close (conclude) the room',
  description:
    'Terminal: the room becomes concluded and read-only, and a conclusion receipt is signed and chained to the last sealed receipt. Only possible when no decision is open. Gated by conclusion_authority (default: the operator).',
  tag: 'rooms',
  method: 'POST',
  path: '/api/rooms/{slug}/close',
  inputSource: 'body',
  input: closeInput,
  output: z
    .object({
      ok: z.literal(true).describe('Always true on success.'),
      slug: z.string().describe('The room slug.'),
      status: z.literal('concluded').describe('The room is closed and read-only.'),
      concluded_at: z.string().describe('When the room was closed (RFC 3339, UTC).'),
      closing_statement: z.string().nullable().describe('The closing statement; null if none.'),
      receipt_hash: z.string().describe('The conclusion receipt hash ("sha256:…").'),
      prev_hash: z
        .string()
        .nullable()
        .describe('The receipt hash the conclusion chains to; null if no decision sealed.'),
    })
    .meta({ id: 'CloseResponse', description: 'The conclusion and its receipt.' }),
  requestSchemaName: 'CloseRequest',
  responseSchemaName: 'CloseResponse',
  mutating: true,
  shownText: { statement: 'paragraphs' },
  mandateAction: 'close',
  deferValidation: true,
  example: { input: { slug: 'k7mq2xw9pa', statement: 'We deploy to eu-west first.' } },
  mcp: { tool: 'close_room', catalogs: ['participant', 'host'], destructive: true, idempotent: true },
  async handle(ctx, input, invalid) {
    return act(ctx, input.slug, {
      action: 'close_room',
      route: `POST /api/rooms/${input.slug}/close`,
      build: (_state, actor, now) => ({
        type: 'CLOSE',
        now,
        actor,
        statement: input.statement ?? null,
        ...(invalid ? { invalid: invalid.toSpec() } : {}),
      }),
      render: (_info, state) => {
        const conclusion = state.room.conclusion!;
        return {
          ok: true,
          slug: state.slug,
          status: 'concluded',
          concluded_at: iso(conclusion.at)!,
          closing_statement: conclusion.statement,
          receipt_hash: conclusion.receipt!.hash,
          prev_hash: conclusion.receipt!.prevHash,
        };
      },
    });
  },
} satisfies OperationDef<z.infer<typeof closeInput>>;
