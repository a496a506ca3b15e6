/** The UTS #39 skeleton and the look-alike forms built on it (src/domain/skeleton.ts, shown-text.ts). */
import { describe, expect, it } from 'vitest';
import { skeleton } from '../../../src/domain/skeleton.js';
import {
  howTheyDiffer,
  namesLookAlike,
  optionLikeness,
  reservedName,
  seatNameLikeness,
} from '../../../src/domain/shown-text.js';

describe('skeleton', () => {
  it('maps look-alike letters of other scripts to one prototype', () => {
    expect(skeleton('Y\u0435s')).toBe(skeleton('Yes'));
    expect(skeleton('\u0430lice')).toBe(skeleton('alice'));
    expect(skeleton('\u0391\u0392\u0421')).toBe(skeleton('ABC'));
    expect(skeleton('aIice')).toBe(skeleton('alice'));
  });

  it('keeps case apart where the glyphs differ, so "Nd5" and "nd5" stay two', () => {
    expect(skeleton('Nd5')).not.toBe(skeleton('nd5'));
    expect(skeleton('Yes')).not.toBe(skeleton('yes'));
    expect(skeleton('A')).not.toBe(skeleton('a'));
  });

  it('is its own fixed point and drops default-ignorable code points', () => {
    for (const text of ['Y\u0435s', 'modern', 'ﬁsh', '\u0430l\u0456ce', 'Zoë']) {
      expect(skeleton(skeleton(text))).toBe(skeleton(text));
    }
    expect(skeleton('ye\u200Bs')).toBe(skeleton('yes'));
  });
});

describe('look-alike forms', () => {
  it('sets aside spaces at the ends and between words for options, but not case', () => {
    for (const twin of ['Yes ', ' Yes', 'Yes\u00A0', 'Y\u0435s'])
      expect(optionLikeness(twin)).toBe(optionLikeness('Yes'));
    expect(optionLikeness('ap  south')).toBe(optionLikeness('ap south'));
    expect(optionLikeness('Nd5')).not.toBe(optionLikeness('nd5'));
    expect(optionLikeness('Yes')).not.toBe(optionLikeness('No'));
  });

  it('tells look-alike seat names from the same name in another case', () => {
    const alice = seatNameLikeness('alice');
    expect(namesLookAlike(alice, seatNameLikeness('\u0430lice'))).toBe(true);
    expect(namesLookAlike(alice, seatNameLikeness('\u0410lice'))).toBe(true);
    expect(namesLookAlike(alice, seatNameLikeness('aIice'))).toBe(true);
    // The same name (case-insensitively) is the protocol's repeated name, given " (2)", not a look-alike.
    expect(namesLookAlike(alice, seatNameLikeness('ALICE'))).toBe(false);
    expect(namesLookAlike(alice, seatNameLikeness('bob'))).toBe(false);
  });

  it('finds reserved names spelled in look-alike letters', () => {
    expect(reservedName('\u043Eperator')).toBe('operator');
    expect(reservedName('\u0430dmin')).toBe('admin');
    expect(reservedName('operations')).toBeNull();
  });

  it('says where two look-alikes differ', () => {
    expect(howTheyDiffer('Yes', 'Y\u0435s')).toBe('at character 2 one has U+0435 where the other has U+0065');
    expect(howTheyDiffer('Yes', ' Yes')).toMatch(/only in spaces/);
  });
});
