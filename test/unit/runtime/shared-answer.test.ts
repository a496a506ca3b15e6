/** Answers handed to many callers (src/runtime/shared-answer.ts): frozen throughout, serialized once. */
import { describe, expect, it } from 'vitest';
import { shareAnswer, sharedJson } from '../../../src/runtime/shared-answer.js';

describe('shared answers', () => {
  it('freezes the answer throughout and serializes it once, for REST callers only', () => {
    const answer = shareAnswer({ status: 'actionable', decision: { seq: 1, options: ['a', 'ü'] } });
    expect(Object.isFrozen(answer.decision.options)).toBe(true);
    expect(() => {
      (answer.decision as { seq: number }).seq = 2;
    }).toThrow(TypeError);
    const json = sharedJson(answer);
    expect(json?.bytes.toString()).toBe(JSON.stringify(answer));
    expect(json?.length).toBe(String(Buffer.byteLength(JSON.stringify(answer))));
    expect(sharedJson(answer)).toBe(json);
  });

  it('knows nothing of answers that were not shared', () => {
    expect(sharedJson({ status: 'timeout' })).toBeUndefined();
    expect(sharedJson(null)).toBeUndefined();
    expect(sharedJson('text')).toBeUndefined();
  });
});
