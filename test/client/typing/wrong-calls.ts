/**
 * Calls that must not compile: each line after a `@ts-expect-error` is a mistake the client's types
 * catch. `npm run typecheck` fails if one of them compiles; test/package/client-pack.test.ts strips
 * the directives and checks that the packed package rejects exactly these lines.
 */
import { type ConclaveClient, ConclaveError, type Outcome } from '../../../src/client/index.js';

export async function wrongCalls(client: ConclaveClient, slug: string, outcome: Outcome): Promise<void> {
  // @ts-expect-error choose needs a choice
  await client.choose({ slug });
  // @ts-expect-error an approval ballot is an array of options
  await client.choose({ slug, mechanism: 'approval', choice: 'pizza' });
  // @ts-expect-error a plurality ballot is one option: scores are for score and quadratic ballots
  await client.choose<'plurality'>({ slug, scores: [{ option: 1, points: 1 }] });
  // @ts-expect-error a room needs a question or an about text
  await client.createRoom({});
  // @ts-expect-error RoomConfig keys are closed: voting_window, not votingwindow
  await client.createRoom({ question: 'Lunch?', config: { votingwindow: 3 } });
  // @ts-expect-error borda is not a mechanism the service runs
  await client.createRoom({ question: 'Lunch?', config: { mechanism: 'borda' } });
  // @ts-expect-error voting_window is a number of seconds
  await client.ask({ slug, question: 'Which day?', voting_window: '600' });
  // @ts-expect-error every room method needs the slug
  await client.discuss({ body: 'hello' });
  // @ts-expect-error discuss needs a body
  await client.discuss({ slug, stance: 'agree' });
  // @ts-expect-error the mechanism is fixed at creation: a settings patch cannot carry it
  await client.updateRoomSettings({ slug, settings: { mechanism: 'plurality' } });
  // @ts-expect-error stance is one of agree, disagree, clarify, extend
  await client.discuss({ slug, body: 'hello', stance: 'neutral' });
  const view = await client.getRoom({ slug });
  // @ts-expect-error there may be no open decision
  view.decision.options;
  // @ts-expect-error options are strings
  const counts: number[] = view.decision?.options ?? [];
  // @ts-expect-error a receipt is null until its decision seals
  outcome.decisions.at(0)?.receipt_jws.length;
  try {
    await client.getRoom({ slug });
  } catch (error) {
    // @ts-expect-error no such error code: it is room.not_found
    if (error instanceof ConclaveError && error.code === 'room.notfound') return;
  }
  void counts;
}
