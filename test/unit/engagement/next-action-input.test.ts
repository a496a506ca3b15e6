/** The next-action operation's parameter rules (06 §5.1), down to what it asks engagement for. */
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/auth/secrets.js';
import type { LongPollCall } from '../../../src/engagement/long-poll.js';
import { nextAction } from '../../../src/operations/next-action.js';
import type { RequestContext } from '../../../src/operations/types.js';

function context(calls: LongPollCall[]): RequestContext {
  const member = {
    id: 'p1',
    displayName: 'one',
    role: 'participant',
    isCreator: false,
    tokenHash: hashSecret('t_one'),
    supersededHashes: [],
    agentDid: null,
  };
  const state = {
    slug: 'room',
    head: 7,
    room: { members: [member], invites: [], config: { auth: 'either', visibility: 'unlisted' }, passwordHash: null },
    decisions: [],
    concluded: false,
  };
  return {
    services: {
      registry: { read: async () => state },
      auth: { adminTokenHash: null },
      engagement: {
        longPoll: async (call: LongPollCall) => {
          calls.push(call);
          return {};
        },
      },
    },
    credentials: { bearer: 't_one' },
    clientIp: '127.0.0.1',
  } as unknown as RequestContext;
}

async function asked(query: Record<string, unknown>): Promise<LongPollCall> {
  const calls: LongPollCall[] = [];
  await nextAction.handle(context(calls), nextAction.input.parse({ slug: 'room', ...query }));
  return calls[0]!;
}

describe('next-action parameters', () => {
  it('defaults to 25 s of my_choice and clamps the wait to 50 s', async () => {
    expect(await asked({})).toMatchObject({ waitSeconds: 25, query: { mode: 'my_choice' } });
    // The wait takes its place in the pool under the caller's address and credential.
    expect((await asked({})).claim).toEqual({ address: '127.0.0.1', credential: `bearer:${hashSecret('t_one')}` });
    expect((await asked({ wait: '999' })).waitSeconds).toBe(50);
    expect((await asked({ wait: '0' })).waitSeconds).toBe(0);
    expect((await asked({ wait: '2.5' })).waitSeconds).toBe(2.5);
  });

  it('normalises my_vote and picks the cursor default per mode', async () => {
    expect((await asked({ for: 'my_vote' })).query.mode).toBe('my_choice');
    expect((await asked({ for: 'activity' })).query.sinceSeq).toBe(7);
    expect((await asked({ for: 'activity', since_seq: '3' })).query.sinceSeq).toBe(3);
    expect((await asked({ for: 'completion' })).query.sinceSeq).toBe(0);
  });

  it('refuses negative and non-numeric waits', () => {
    for (const wait of ['-1', 'soon', -2, '1e3']) {
      expect(nextAction.input.safeParse({ slug: 'room', wait }).success, String(wait)).toBe(false);
    }
  });
});
