import { describe, expect, it } from 'vitest';
import {
  ballotText,
  howToChoose,
  isSingleChoice,
  parseBallot,
  resolveOptionRef,
  singleChoiceNumber,
} from '../../../src/domain/ballots.js';
import { ProtocolError } from '../../../src/errors.js';
import { type MechanismName, WIRED_MECHANISMS } from '../../../src/mechanisms/index.js';

const OPTIONS = ['alpha', 'Beta', '2', 'gamma delta', 'Nd5'];
const ctx = { slug: 'k7m3pq2dnx', proposalsOpen: false };

function parse(mechanism: MechanismName, raw: unknown, options = OPTIONS, agreement = false) {
  return parseBallot(mechanism, agreement, options, raw, ctx);
}

function rejection(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('expected a ProtocolError');
}

function expectShapeError(run: () => unknown, mechanism: MechanismName, agreement = false): ProtocolError {
  const error = rejection(run);
  expect(error.code).toBe('input.invalid');
  expect(error.status).toBe(400);
  expect(error.details).toMatchObject({ field: 'choice', reason: 'ballot_shape' });
  expect(error.message).toContain(howToChoose(mechanism, agreement));
  expect(error.message).toContain(`the choose action / POST /api/rooms/${ctx.slug}/choose`);
  return error;
}

function expectUnknownOption(run: () => unknown): ProtocolError {
  const error = rejection(run);
  expect(error.code).toBe('choice.invalid_option');
  expect(error.status).toBe(400);
  expect(error.details).toEqual({ options: OPTIONS.map((text, i) => ({ number: i + 1, text })) });
  expect(error.message).toContain('1. "alpha"; 2. "Beta"; 3. "2"');
  return error;
}

describe('resolveOptionRef (03 §7.1)', () => {
  it.each([
    ['alpha', 0],
    ['Beta', 1],
    ['gamma delta', 3],
    ['5', 4],
    ['#5', 4],
    ['#1', 0],
    [1, 0],
    [5, 4],
    ['Nd5', 4],
  ] as const)('%j → option index %i', (ref, index) => {
    expect(resolveOptionRef(OPTIONS, ref)).toBe(index);
  });

  it('prefers exact text over a number-like string', () => {
    // Option 3's text is "2": the string "2" names it; "#2" and the integer 2 name option 2.
    expect(resolveOptionRef(OPTIONS, '2')).toBe(2);
    expect(resolveOptionRef(OPTIONS, '#2')).toBe(1);
    expect(resolveOptionRef(OPTIONS, 2)).toBe(1);
  });

  it.each([
    'ALPHA',
    'beta',
    'nd5',
    ' alpha',
    'alpha ',
    '0',
    '#0',
    '6',
    '05',
    '# 1',
    '1.0',
    '+1',
    '5\n',
    '',
    0,
    6,
    -1,
    1.5,
    Number.NaN,
    true,
    null,
    { alpha: 1 },
  ])('%j names no option', (ref) => {
    expect(resolveOptionRef(OPTIONS, ref)).toBeNull();
  });

  it('handles arrays and a huge number-like string', () => {
    expect(resolveOptionRef(OPTIONS, ['alpha'])).toBeNull();
    expect(resolveOptionRef(OPTIONS, '9'.repeat(400))).toBeNull();
  });
});

describe('single-choice ballots', () => {
  const singleChoice = ['simple_majority', 'supermajority', 'plurality'] as const;

  it.each(singleChoice)('%s stores the canonical option text', (mechanism) => {
    expect(parse(mechanism, 'alpha')).toEqual({ ballot: 'alpha', weight: 1 });
    expect(parse(mechanism, '5')).toEqual({ ballot: 'Nd5', weight: 1 });
    expect(parse(mechanism, '#4')).toEqual({ ballot: 'gamma delta', weight: 1 });
    expect(parse(mechanism, 2)).toEqual({ ballot: 'Beta', weight: 1 });
    expect(parse(mechanism, '2')).toEqual({ ballot: '2', weight: 1 });
  });

  it.each(singleChoice)('%s refuses arrays, objects and non-references with a lesson', (mechanism) => {
    for (const raw of [['alpha'], { alpha: 1 }, null, true, undefined]) {
      const error = expectShapeError(() => parse(mechanism, raw), mechanism);
      expect(error.message).toContain('{"choice": 1}');
    }
  });

  it.each(singleChoice)('%s refuses unknown references', (mechanism) => {
    for (const raw of ['ALPHA', 'zeta', 0, 6, '#6', 2.5]) expectUnknownOption(() => parse(mechanism, raw));
  });

  it('treats agreement decisions as single choice and teaches acceptance', () => {
    expect(parseBallot('supermajority', true, OPTIONS, '#1', ctx)).toEqual({ ballot: 'alpha', weight: 1 });
    const error = expectShapeError(() => parse('simple_majority', ['alpha'], OPTIONS, true), 'simple_majority', true);
    expect(error.message).toContain('accept');
  });
});

describe('approval ballots', () => {
  it('resolves references and de-duplicates, keeping the first occurrence', () => {
    expect(parse('approval', ['Beta', 1, '#2', 'alpha', '2'])).toEqual({ ballot: ['Beta', 'alpha', '2'], weight: 1 });
  });

  it.each([[{}], [[]], ['alpha'], [3]])('refuses %j', (raw) => {
    const error = expectShapeError(() => parse('approval', raw), 'approval');
    expect(error.message).toContain('{"choice": [1, 2]}');
  });

  it('refuses entries that are not references', () => {
    expectShapeError(() => parse('approval', ['alpha', ['Beta']]), 'approval');
    expectShapeError(() => parse('approval', ['alpha', null]), 'approval');
  });

  it('refuses unknown entries', () => {
    expectUnknownOption(() => parse('approval', ['alpha', 'beta']));
  });
});

describe('ranked ballots', () => {
  const ranked = ['ranked_choice', 'ranked_pairwise'] as const;

  it.each(ranked)('%s keeps the order and allows partial rankings', (mechanism) => {
    expect(parse(mechanism, ['#3', 'Nd5', 1])).toEqual({ ballot: ['2', 'Nd5', 'alpha'], weight: 1 });
    expect(parse(mechanism, ['gamma delta'])).toEqual({ ballot: ['gamma delta'], weight: 1 });
  });

  it.each(ranked)('%s refuses two entries naming the same option', (mechanism) => {
    const error = rejection(() => parse(mechanism, ['alpha', 'Beta', '#1']));
    expect(error.code).toBe('input.invalid');
    expect(error.details).toMatchObject({ field: 'choice', reason: 'duplicate_in_ranking' });
    expect(error.message).toContain('Option 1 ("alpha")');
    expect(error.message).toContain(howToChoose(mechanism, false));
    expect(error.message).toContain(`the choose action / POST /api/rooms/${ctx.slug}/choose`);
  });

  it.each(ranked)('%s refuses empty and non-array rankings', (mechanism) => {
    expectShapeError(() => parse(mechanism, []), mechanism);
    expectShapeError(() => parse(mechanism, 'alpha'), mechanism);
    expectShapeError(() => parse(mechanism, { alpha: 1 }), mechanism);
  });

  it.each(ranked)('%s refuses unknown entries', (mechanism) => {
    expectUnknownOption(() => parse(mechanism, ['alpha', 'Alpha']));
  });
});

describe('score ballots', () => {
  it('keys the canonical map by option text in slate order', () => {
    const { ballot, weight } = parse('score_vote', { '#5': 1, alpha: 4.5, '2': 0, '#2': 5 });
    expect(weight).toBe(1);
    expect(ballot).toEqual({ alpha: 4.5, Beta: 5, '2': 0, Nd5: 1 });
    expect(ballotText(ballot)).toBe('{"2":0,"Beta":5,"Nd5":1,"alpha":4.5}');
  });

  it.each([[6], [-1], ['5'], [null], [true], [[5]], [Number.POSITIVE_INFINITY]])('refuses the value %j', (value) => {
    const error = expectShapeError(() => parse('score_vote', { alpha: value }), 'score_vote');
    expect(error.message).toContain('option 1');
  });

  it('needs at least one score above 0', () => {
    expectShapeError(() => parse('score_vote', { alpha: 0, Beta: 0 }), 'score_vote');
    expectShapeError(() => parse('score_vote', {}), 'score_vote');
  });

  it('refuses two keys naming the same option', () => {
    const error = expectShapeError(() => parse('score_vote', { alpha: 3, '#1': 4 }), 'score_vote');
    expect(error.message).toContain('both name option 1');
  });

  it('refuses non-object ballots and unknown keys', () => {
    const error = expectShapeError(() => parse('score_vote', ['alpha']), 'score_vote');
    expect(error.message).toContain('{"choice": {"1": 5, "2": 3}}');
    expectShapeError(() => parse('score_vote', 5), 'score_vote');
    expectUnknownOption(() => parse('score_vote', { alpha: 3, zeta: 1 }));
  });
});

describe('quadratic ballots', () => {
  it('weighs the ballot by the credits spent and keys it in slate order', () => {
    expect(parse('quadratic_vote', { Nd5: 1, '1': 4, '2': 0 })).toEqual({
      ballot: { alpha: 4, '2': 0, Nd5: 1 },
      weight: 5,
    });
    expect(parse('quadratic_vote', { '#2': 9 })).toEqual({ ballot: { Beta: 9 }, weight: 9 });
  });

  it.each([
    [{ alpha: 1.5 }, 'whole number'],
    [{ alpha: -1 }, 'whole number'],
    [{ alpha: '4' }, 'whole number'],
    [{ alpha: 5, Beta: 5 }, 'add up to 10'],
    [{ alpha: 0 }, 'add up to 0'],
    [{}, 'add up to 0'],
    [{ alpha: 4, '#1': 1 }, 'both name option 1'],
  ])('refuses %j', (raw, hint) => {
    const error = expectShapeError(() => parse('quadratic_vote', raw), 'quadratic_vote');
    expect(error.message).toContain(hint);
  });

  it('refuses unknown keys', () => {
    expectUnknownOption(() => parse('quadratic_vote', { ALPHA: 1 }));
  });
});

describe('unknown-option messages', () => {
  it('suggest proposing only while proposals are open', () => {
    const closed = rejection(() => parse('plurality', 'zeta'));
    expect(closed.message).not.toContain('propose');
    const open = rejection(() => parseBallot('plurality', false, OPTIONS, 'zeta', { ...ctx, proposalsOpen: true }));
    expect(open.message).toContain(`the propose action / POST /api/rooms/${ctx.slug}/options`);
  });

  it('clip long texts in the message but keep them whole in details', () => {
    const long = 'x'.repeat(5000);
    const error = rejection(() => parseBallot('plurality', false, [long], 'y'.repeat(5000), ctx));
    expect(error.message.length).toBeLessThan(1000);
    expect(error.details).toEqual({ options: [{ number: 1, text: long }] });
  });
});

describe('ballot helpers', () => {
  it('ballotText keeps strings and JCS-encodes arrays and maps', () => {
    expect(ballotText('a "quoted" option')).toBe('a "quoted" option');
    expect(ballotText(['alpha', 'beta'])).toBe('["alpha","beta"]');
    expect(ballotText({ beta: 1, alpha: 5 })).toBe('{"alpha":5,"beta":1}');
  });

  it('singleChoiceNumber is 1-based for option texts and null otherwise', () => {
    expect(singleChoiceNumber(OPTIONS, 'alpha')).toBe(1);
    expect(singleChoiceNumber(OPTIONS, '2')).toBe(3);
    expect(singleChoiceNumber(OPTIONS, 'zeta')).toBeNull();
    expect(singleChoiceNumber(OPTIONS, ['alpha'])).toBeNull();
    expect(singleChoiceNumber(OPTIONS, { alpha: 1 })).toBeNull();
  });

  it('isSingleChoice covers the three majority-family mechanisms and agreement decisions', () => {
    expect(WIRED_MECHANISMS.filter((m) => isSingleChoice(m, false))).toEqual([
      'simple_majority',
      'supermajority',
      'plurality',
    ]);
    expect(isSingleChoice('simple_majority', true)).toBe(true);
  });

  it('howToChoose carries the fragments clients recognise (02 §6.1)', () => {
    const fragments: Record<MechanismName, string> = {
      simple_majority: 'choose with a single option',
      supermajority: 'choose with a single option',
      plurality: 'choose with a single option',
      approval: 'array of every option',
      ranked_choice: 'ranked array',
      ranked_pairwise: 'ranked array',
      score_vote: 'scores from',
      quadratic_vote: 'credits',
    };
    for (const mechanism of WIRED_MECHANISMS) expect(howToChoose(mechanism, false)).toContain(fragments[mechanism]);
    expect(howToChoose('plurality', false)).toBe(
      'choose with a single option: send its number or exact text; the most-chosen option wins.',
    );
    expect(howToChoose('simple_majority', true)).toBe(
      'choose with a single option to accept it; the decision passes only when every eligible participant accepts the same option.',
    );
  });
});
