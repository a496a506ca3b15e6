import { describe, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../../src/http/body.js';
import { BodyBudget, CHUNKED_STEP, declaredBytes } from '../../../src/http/body-budget.js';

describe('the budget of request bodies in flight', () => {
  it('gives one address a tenth, never less than one body of the limit, and the pool to everyone', () => {
    expect(new BodyBudget(100 * BODY_LIMIT).addressLimit).toBe(10 * BODY_LIMIT);
    const budget = new BodyBudget(2 * BODY_LIMIT);
    expect(budget.addressLimit).toBe(BODY_LIMIT);
    const a = budget.reserve('a', BODY_LIMIT);
    expect(budget.reserve('a', 1)).toBe('address');
    const b = budget.reserve('b', BODY_LIMIT);
    expect(budget.reserve('c', 1)).toBe('full');
    expect(budget.inFlight).toBe(2 * BODY_LIMIT);
    if (typeof a === 'string' || typeof b === 'string') throw new Error('not reserved');
    a.release();
    a.release();
    expect(budget.inFlight).toBe(BODY_LIMIT);
    expect(typeof budget.reserve('a', BODY_LIMIT)).toBe('object');
  });

  it('grows a reservation within the share and the pool, and releases all it grew to', () => {
    const budget = new BodyBudget(2 * BODY_LIMIT);
    const a = budget.reserve('a', CHUNKED_STEP);
    if (typeof a === 'string') throw new Error('not reserved');
    expect(a.grow(BODY_LIMIT - CHUNKED_STEP)).toBe(true);
    expect(a.bytes).toBe(BODY_LIMIT);
    expect(a.grow(1)).toBe('address');
    expect(a.bytes).toBe(BODY_LIMIT);
    const b = budget.reserve('b', BODY_LIMIT - 1);
    if (typeof b === 'string') throw new Error('not reserved');
    expect(budget.reserve('c', 2)).toBe('full');
    a.release();
    expect(budget.inFlight).toBe(BODY_LIMIT - 1);
  });

  it('counts the declared length, a first step for a chunked body, nothing without one', () => {
    expect(declaredBytes({ 'content-length': '1234' })).toBe(1234);
    expect(declaredBytes({ 'content-length': String(10 * BODY_LIMIT) })).toBe(BODY_LIMIT);
    expect(declaredBytes({ 'transfer-encoding': 'chunked' })).toBe(CHUNKED_STEP);
    expect(declaredBytes({ 'content-length': '0' })).toBe(0);
    expect(declaredBytes({})).toBe(0);
  });
});
