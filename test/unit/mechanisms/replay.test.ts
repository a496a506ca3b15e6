import { describe, expect, it } from 'vitest';
import { type MechanismName, replayReceipt, verifyAgreementReceiptSemantics } from '../../../src/mechanisms/index.js';
import { jcs } from '../../../src/mechanisms/tie-break.js';
import { type DecisionSetup, type ReceiptPayload, receiptPayload } from './receipt-fixture.js';

const plurality: DecisionSetup = {
  kind: 'plurality',
  options: ['alpha', 'beta', 'gamma'],
  ballots: [
    ['participant:1', 'alpha'],
    ['did:key:z6Mk', 'alpha'],
    ['participant:3', 'beta'],
  ],
  eligibleVoters: 4,
};

function tampered(setup: DecisionSetup, change: (payload: ReceiptPayload) => void): ReceiptPayload {
  const payload = receiptPayload(setup);
  change(payload);
  return payload;
}

describe('replayReceipt (05 §7 step 6)', () => {
  it('matches an honest receipt and reports what it expected', () => {
    expect(replayReceipt(receiptPayload(plurality))).toEqual({
      result: 'match',
      expected: { status: 'completed', winning_option: 'alpha', tallies: { alpha: 2, beta: 1, gamma: 0 } },
    });
  });

  it.each([
    [
      'status',
      (p: ReceiptPayload) => {
        p.svc.outcome.status = 'rejected';
      },
    ],
    [
      'winning_option',
      (p: ReceiptPayload) => {
        p.svc.outcome.winning_option = 'beta';
      },
    ],
    [
      'tallies',
      (p: ReceiptPayload) => {
        p.svc.outcome.tallies.beta = 2;
      },
    ],
    ['tallies', (p: ReceiptPayload) => void delete p.svc.outcome.tallies.gamma],
    [
      'tallies',
      (p: ReceiptPayload) => {
        p.svc.outcome.tallies.delta = 0;
      },
    ],
  ])('detects a tampered %s', (field, change) => {
    const report = replayReceipt(tampered(plurality, change));
    expect(report.result).toBe('mismatch');
    expect(report.reason).toContain(field);
  });

  it('detects a tampered ballot', () => {
    const report = replayReceipt(
      tampered(plurality, (p) => {
        p.svc.votes[2]!.choice = 'alpha';
      }),
    );
    expect(report.result).toBe('mismatch');
  });

  it('reports unavailable for aggregate-only receipts (choice_visibility never)', () => {
    expect(
      replayReceipt(
        tampered(plurality, (p) => {
          p.svc.votes = [];
        }),
      ),
    ).toMatchObject({ result: 'unavailable' });
  });

  it('reports unavailable for unknown mechanisms and conclusion receipts', () => {
    const unknown = tampered(plurality, (p) => {
      p.svc.mechanism!.kind = 'budget_allocation';
    });
    expect(replayReceipt(unknown)).toMatchObject({ result: 'unavailable' });
    const conclusion = tampered(plurality, (p) => {
      p.svc.decision_kind = 'conclusion';
      p.svc.mechanism = null;
      p.svc.decision_id = null;
    });
    expect(replayReceipt(conclusion)).toMatchObject({ result: 'unavailable' });
  });

  it('counts abstentions as participation', () => {
    const setup: DecisionSetup = {
      kind: 'simple_majority',
      options: ['a', 'b'],
      ballots: [
        ['p1', 'a'],
        ['p2', 'a'],
      ],
      abstainers: ['p3'],
      eligibleVoters: 4,
      quorumFraction: 0.75,
    };
    const payload = receiptPayload(setup);
    expect(payload.svc.outcome.status).toBe('completed');
    expect(replayReceipt(payload).result).toBe('match');
    payload.svc.abstentions = [];
    expect(replayReceipt(payload)).toMatchObject({ result: 'mismatch', expected: { status: 'no_quorum' } });
  });

  it('expects no_quorum with a null winner when nobody responded', () => {
    const setup: DecisionSetup = { kind: 'ranked_choice', options: ['a', 'b'], ballots: [], eligibleVoters: 3 };
    const payload = receiptPayload(setup);
    expect(payload.svc.outcome).toMatchObject({ status: 'no_quorum', winning_option: null });
    expect(replayReceipt(payload).result).toBe('match');
  });

  it('matches an empty-slate receipt and refuses one that claims a result', () => {
    const setup: DecisionSetup = { kind: 'approval', options: [], ballots: [], eligibleVoters: 3 };
    expect(replayReceipt(receiptPayload(setup))).toEqual({
      result: 'match',
      expected: { status: 'no_quorum', winning_option: null, tallies: {} },
    });
    const claimed = tampered(setup, (p) => {
      p.svc.outcome.status = 'rejected';
    });
    expect(replayReceipt(claimed).result).toBe('mismatch');
  });

  const mapAndArrayBallots: [MechanismName, DecisionSetup['ballots']][] = [
    [
      'approval',
      [
        ['p1', ['b', 'a']],
        ['p2', ['b']],
      ],
    ],
    [
      'ranked_choice',
      [
        ['p1', ['b', 'a']],
        ['p2', ['a']],
        ['p3', ['b']],
      ],
    ],
    [
      'ranked_pairwise',
      [
        ['p1', ['b', 'a']],
        ['p2', ['a']],
        ['p3', ['b']],
      ],
    ],
    [
      'score_vote',
      [
        ['p1', { a: 5, b: 1 }],
        ['p2', { b: 2.5 }],
      ],
    ],
    [
      'quadratic_vote',
      [
        ['p1', { a: 4, b: 1 }],
        ['p2', { b: 9 }],
      ],
    ],
  ];

  it.each(mapAndArrayBallots)('decodes %s ballots from their JCS text', (kind, ballots) => {
    const payload = receiptPayload({ kind, options: ['a', 'b'], ballots, eligibleVoters: 3 });
    expect(payload.svc.votes.map((vote) => vote.choice)).toEqual(ballots.map(([, ballot]) => jcs(ballot)));
    expect(replayReceipt(payload).result).toBe('match');
  });

  it('reports a choice that is not JSON as a mismatch', () => {
    const setup: DecisionSetup = { kind: 'approval', options: ['a'], ballots: [['p1', ['a']]], eligibleVoters: 1 };
    const report = replayReceipt(
      tampered(setup, (p) => {
        p.svc.votes[0]!.choice = 'a';
      }),
    );
    expect(report).toMatchObject({ result: 'mismatch' });
  });

  it('reports malformed payloads as mismatches', () => {
    expect(replayReceipt(null).result).toBe('mismatch');
    expect(replayReceipt({ svc: {} }).result).toBe('mismatch');
    const badCounts = tampered(plurality, (p) => {
      p.svc.outcome.diagnostics.cast_votes = -1;
    });
    expect(replayReceipt(badCounts).result).toBe('mismatch');
    const tooMany = tampered(plurality, (p) => {
      p.svc.outcome.diagnostics.eligible_voters = 2;
    });
    expect(replayReceipt(tooMany)).toMatchObject({ result: 'mismatch' });
    expect(replayReceipt(tooMany).reason).toContain('refuses');
  });
});

describe('voters are (issuer, subject) (docs/mechanisms.md, Voters)', () => {
  /** Plurality, a 2 to 1 tally: the first two ballots name one subject, with the issuers given. */
  const twoSeats = (first: string | undefined, second: string | undefined): ReceiptPayload =>
    tampered(plurality, (p) => {
      for (const [i, iss] of [first, second].entries()) {
        p.svc.votes[i]!.agent_id = 'urn:example:agent:7';
        if (iss !== undefined) p.svc.votes[i]!.agent_iss = iss;
      }
    });

  it("replays one subject's ballots of two issuers as two voters", () => {
    expect(replayReceipt(twoSeats('did:key:zSquatter', 'https://issuer.example')).result).toBe('match');
    // A ballot signed before ballots carried their issuer is a voter of its own too.
    expect(replayReceipt(twoSeats(undefined, 'https://issuer.example')).result).toBe('match');
  });

  it('still finds one voter repeated: same issuer and subject, or neither ballot with an issuer', () => {
    for (const [first, second] of [
      ['https://issuer.example', 'https://issuer.example'],
      [undefined, undefined],
    ] as const) {
      const report = replayReceipt(twoSeats(first, second));
      expect(report.result, `${first} / ${second}`).toBe('mismatch');
      expect(report.reason).toContain('tallies');
    }
  });

  it('refuses an agent_iss that is not a string', () => {
    const report = replayReceipt(twoSeats(7 as unknown as string, 'https://issuer.example'));
    expect(report).toMatchObject({ result: 'mismatch', reason: 'vote 0 has an agent_iss that is not a string' });
  });

  it('lets two issuers of one subject each accept an agreement once, and no voter twice', () => {
    const unanimous = (first: string, second: string) =>
      tampered(
        {
          kind: 'simple_majority',
          options: ['x', 'y'],
          ballots: [
            ['p1', 'x'],
            ['p2', 'x'],
          ],
          eligibleVoters: 2,
          agreement: true,
        },
        (p) => {
          for (const [i, iss] of [first, second].entries()) {
            p.svc.votes[i]!.agent_id = 'did:key:zSub';
            p.svc.votes[i]!.agent_iss = iss;
          }
        },
      );
    expect(verifyAgreementReceiptSemantics(unanimous('did:key:zSub', 'https://issuer.example'))).toEqual({
      result: 'valid',
    });
    expect(verifyAgreementReceiptSemantics(unanimous('did:key:zSub', 'did:key:zSub'))).toMatchObject({
      result: 'invalid',
      reason: expect.stringContaining('voted twice'),
    });
  });
});

describe('agreement receipts (05 §8)', () => {
  const agreement = (ballots: [string, string][], eligibleVoters: number): DecisionSetup => ({
    kind: 'supermajority',
    options: ['x', 'y'],
    ballots,
    eligibleVoters,
    agreement: true,
  });

  it.each([
    [
      'unanimous',
      agreement(
        [
          ['p1', 'x'],
          ['p2', 'x'],
        ],
        2,
      ),
      'completed',
      'x',
    ],
    [
      'split',
      agreement(
        [
          ['p1', 'x'],
          ['p2', 'y'],
        ],
        2,
      ),
      'rejected',
      null,
    ],
    ['partial', agreement([['p1', 'x']], 2), 'no_quorum', null],
  ] as const)('%s turnout is valid and replays', (_name, setup, status, winner) => {
    const payload = receiptPayload(setup);
    expect(payload.svc.outcome).toMatchObject({ status, winning_option: winner });
    expect(payload.svc.mechanism?.parameters.agreement).toBe(true);
    expect(verifyAgreementReceiptSemantics(payload)).toEqual({ result: 'valid' });
    expect(replayReceipt(payload).result).toBe('match');
  });

  it.each([
    [
      'a non-majority kind',
      (p: ReceiptPayload) => {
        p.svc.mechanism!.kind = 'plurality';
      },
    ],
    [
      'a comparison key',
      (p: ReceiptPayload) => {
        p.svc.mechanism!.parameters.pass_threshold_comparison = 'inclusive';
      },
    ],
    [
      'a different quorum',
      (p: ReceiptPayload) => {
        p.svc.mechanism!.parameters.quorum = 0.5;
      },
    ],
    [
      'repeated options',
      (p: ReceiptPayload) => {
        p.svc.mechanism!.parameters.options = ['x', 'x'];
      },
    ],
    [
      'a repeated voter',
      (p: ReceiptPayload) => {
        p.svc.votes[1]!.agent_id = p.svc.votes[0]!.agent_id;
      },
    ],
    [
      'an empty agent id',
      (p: ReceiptPayload) => {
        p.svc.votes[0]!.agent_id = '';
      },
    ],
    [
      'an off-slate choice',
      (p: ReceiptPayload) => {
        p.svc.votes[0]!.choice = 'z';
      },
    ],
    [
      'a weight of 2',
      (p: ReceiptPayload) => {
        p.svc.votes[0]!.weight = 2;
      },
    ],
    [
      'cast_votes off by one',
      (p: ReceiptPayload) => {
        p.svc.outcome.diagnostics.cast_votes = 1;
      },
    ],
    [
      'wrong tallies',
      (p: ReceiptPayload) => {
        p.svc.outcome.tallies = { x: 2 };
      },
    ],
    [
      'a claimed winner on a split',
      (p: ReceiptPayload) => {
        p.svc.outcome.winning_option = 'x';
      },
    ],
  ])('rejects %s', (_name, change) => {
    const payload = tampered(
      agreement(
        [
          ['p1', 'x'],
          ['p2', 'y'],
        ],
        2,
      ),
      change,
    );
    expect(verifyAgreementReceiptSemantics(payload).result).toBe('invalid');
    expect(replayReceipt(payload).result).toBe('mismatch');
  });

  it('accepts an absent weight', () => {
    const payload = tampered(
      agreement(
        [
          ['p1', 'x'],
          ['p2', 'x'],
        ],
        2,
      ),
      (p) => void delete p.svc.votes[0]!.weight,
    );
    expect(verifyAgreementReceiptSemantics(payload).result).toBe('valid');
  });

  it('is unavailable for aggregate-only receipts and for ordinary decisions', () => {
    const hidden = tampered(
      agreement(
        [
          ['p1', 'x'],
          ['p2', 'x'],
        ],
        2,
      ),
      (p) => {
        p.svc.votes = [];
      },
    );
    expect(verifyAgreementReceiptSemantics(hidden).result).toBe('unavailable');
    expect(replayReceipt(hidden).result).toBe('unavailable');
    expect(verifyAgreementReceiptSemantics(receiptPayload(plurality)).result).toBe('unavailable');
  });
});
