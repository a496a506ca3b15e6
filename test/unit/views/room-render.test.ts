/**
 * The room page's sections as the server paints them (src/pages/room-render.ts): tallies as bars
 * sorted by count with percentages and the winner marked, the settling countdown, who has not
 * chosen, reasons only where the views give choices, and room text never becoming markup.
 */
import { describe, expect, it } from 'vitest';
import { ballotWords, currentSection, discussionSection, tallyBars } from '../../../src/pages/room-render.js';

describe('room page sections', () => {
  it('draws tallies highest first, with counts, percentages and the winner', () => {
    const html = tallyBars({ alpha: 1, beta: 3, '<b>gamma</b>': 0 }, 'beta', 'Tally');
    const order = [...html.matchAll(/data-option="([^"]*)"/g)].map((m) => m[1]);
    expect(order).toEqual(['beta', 'alpha', '&#60;b&#62;gamma&#60;/b&#62;']);
    expect(html).toContain('3 (75%)');
    expect(html).toContain('1 (25%)');
    expect(html).toContain('0 (0%)');
    expect(html).toMatch(/<li data-option="beta" data-count="3" class="winner">/);
    expect(html).not.toContain('<b>');
    const net = tallyBars({ a: -2, b: 2, c: 0 }, 'b', 'Schulze', 'net');
    expect(net).toContain('-2 net');
    expect(net).not.toContain('%)');
    expect([...net.matchAll(/value="(\d+)"/g)].map((m) => m[1])).toEqual(['100', '50', '0']);
  });

  it('shows the settling countdown, who has not chosen and the visible choices with reasons', () => {
    const view = {
      decision: {
        seq: 1,
        question: 'Q?',
        context: 'Some <i>context</i>',
        options: ['a', 'b'],
        option_proposers: [null, 'Bea'],
        status: 'voting',
        agreement: true,
        choices_cast: 1,
        eligible_voters: 2,
        settling: { seals_in_seconds: 30, presumptive: 'a' },
      },
      roster: { waiting_for: ['Bea'] },
      choices: [{ who: 'Ada', choice: '["a","b"]', at: '2026-01-01T00:00:00.000Z' }],
      rules: { choices_visible: 'live' },
    };
    const full = {
      participants: [{ id: 'p1', display_name: 'Ada' }],
      votes: [{ participant_id: 'p1', rationale: 'why not' }],
    };
    const html = currentSection(view, full);
    expect(html).toContain('data-seconds="30"');
    expect(html).toContain('Not chosen yet: <strong>Bea</strong>');
    expect(html).toContain('1. a, 2. b');
    expect(html).toContain('why not');
    expect(html).toContain('(proposed by Bea)');
    expect(html).toContain('passes only if everyone');
    expect(html).toContain('Some &#60;i&#62;context&#60;/i&#62;');
    const hidden = currentSection({ ...view, choices: null, rules: { choices_visible: 'never' } }, full);
    expect(hidden).toContain('never shows who chose what');
    expect(hidden).not.toContain('why not');
  });

  it('reads ballots as words and marks stances', () => {
    expect(ballotWords('{"a":5,"b":1}')).toBe('a: 5, b: 1');
    expect(ballotWords('plain')).toBe('plain');
    expect(ballotWords('["a","b"]')).toBe('1. a, 2. b');
    expect(ballotWords('["a","b"]', 'approval')).toBe('a, b');
    const html = discussionSection({ discussion: [{ who: 'Ada', said: 'hi', stance: 'disagree' }] });
    expect(html).toContain('<span class="stance">disagrees</span>');
  });

  it('shows approval counts as shares of the voters, not of all approvals', () => {
    const html = tallyBars({ a: 3, b: 2 }, 'a', 'Tally', { voters: 3 });
    expect(html).toContain('3 of 3 voters (100%)');
    expect(html).toContain('2 of 3 voters (66.7%)');
  });
});
