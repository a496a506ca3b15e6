/**
 * Calls that must compile, with the answers typed: checked by `npm run typecheck`, and against the
 * packed package by test/package/client-pack.test.ts (under `strict`, without Node's typings).
 */
import {
  type AgentDecision,
  type ConclaveClient,
  ConclaveError,
  type DecisionReceipt,
  type EventType,
  type Outcome,
  type RoomConfig,
  type verifyAgreementReceiptSemantics,
  verifyCompactReceipt,
  verifyRoomReceiptChain,
} from '../../../src/client/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_proof?: T): void {}

export async function rightCalls(client: ConclaveClient): Promise<string> {
  const room = await client.createRoom({
    question: 'Lunch?',
    options: ['pizza', 'sushi'],
    config: { voting_window: 600, mechanism: 'approval', invite_authority: { kind: 'any_participant' } },
  });
  assertType<Equal<typeof room.creator_token, string>>();
  assertType<Equal<typeof room.config, RoomConfig>>();
  const slug = room.slug;
  await client.createRoom({ about: 'A standing room' });
  const view = await client.getRoom({ slug });
  assertType<Equal<typeof view.decision, AgentDecision | null>>();
  if (view.decision) assertType<Equal<typeof view.decision.options, string[]>>();
  const full = await client.getRoom({ slug, include: 'full' });
  assertType<Equal<typeof full.config.voting_window, number>>();
  const delta = await client.readDelta({ slug, since: view.current_through });
  assertType<Equal<typeof delta.current_through, number>>();
  const chosen = await client.choose({ slug, choice: ['pizza', 'sushi'], reason: 'both are fine' });
  assertType<Equal<typeof chosen.revised, boolean>>();
  await client.choose(slug, { choice: 1 });
  // Array ballots name options by number or exact text alike (src/domain/ballots.ts).
  await client.choose({ slug, choice: [2, 'sushi'] });
  // A ballot typed by the room's mechanism (src/client/ballots.ts); `mechanism` is never sent.
  await client.choose({ slug, mechanism: room.config.mechanism, choice: ['pizza'] });
  await client.choose({ slug, mechanism: 'quadratic_vote', scores: [{ option: 'pizza', points: 4 }] });
  await client.discuss(slug, { body: 'Pizza is faster.', stance: 'agree' });
  await client.startChoosing(slug);
  await client.updateRoomSettings({ slug, settings: { voting_window: 1200, early_close: true } });
  const waited = await client.awaitNextAction({ slug, wait: 10 });
  if (waited.status === 'actionable') assertType<Equal<typeof waited.decision.seq, number>>();
  for await (const event of client.paginateEvents({ slug, limit: 50 })) {
    assertType<Equal<typeof event.event_type, EventType>>();
  }
  const outcome = await client.waitForOutcome({ slug, decision: 1 });
  assertType<Equal<typeof outcome, Outcome>>();
  const jwks = await client.jwks();
  const report = await verifyRoomReceiptChain(outcome, { jwks, room: `http://127.0.0.1:3000/r/${slug}` });
  assertType<Equal<typeof report.ok, boolean>>();
  // What the report says of the room is the signed value, typed as such.
  assertType<Equal<(typeof report.decisions)[number]['winner'], string | null>>();
  assertType<Equal<NonNullable<typeof report.conclusion>['statement'], string | null>>();
  const jws = outcome.decisions[0]?.receipt_jws;
  if (jws) {
    const checked = await verifyCompactReceipt({ jws, publicKey: jwks.keys[0], expectedHash: 'sha256:00' });
    if (checked.ok) {
      const receipt = checked.payload as unknown as DecisionReceipt;
      assertType<Equal<typeof receipt.svc.outcome.winning_option, string | null>>();
    }
    assertType<
      Equal<
        ReturnType<typeof verifyAgreementReceiptSemantics>['status'],
        'verified' | 'not_applicable' | 'unavailable' | 'failed'
      >
    >();
  }
  try {
    await client.closeRoom({ slug, statement: 'Done.' });
  } catch (error) {
    if (error instanceof ConclaveError && (error.code === 'room.concluded' || error.code === 'vendor:acme:busy'))
      return error.code;
  }
  return view.decision?.options.join(', ') ?? '';
}
