/** The back-pressure decision alone: refuse on a lag that lasts, not on one pause. */
import { describe, expect, it } from 'vitest';
import { LAGGING_SAMPLES_TO_REFUSE, LoopLagGauge, MAX_EVENT_LOOP_DELAY_MS } from '../../../src/http/back-pressure.js';

const LAGGING = MAX_EVENT_LOOP_DELAY_MS + 1;

describe('LoopLagGauge', () => {
  it('does not refuse after one lagging sample, however long the pause behind it', () => {
    const gauge = new LoopLagGauge();
    gauge.record(30_000);
    expect(gauge.overloaded).toBe(false);
  });

  it('refuses once the loop has lagged for enough samples in a row, and recovers on one healthy sample', () => {
    const gauge = new LoopLagGauge();
    for (let i = 1; i < LAGGING_SAMPLES_TO_REFUSE; i++) gauge.record(LAGGING);
    expect(gauge.overloaded).toBe(false);
    gauge.record(LAGGING);
    expect(gauge.overloaded).toBe(true);
    gauge.record(LAGGING);
    expect(gauge.overloaded).toBe(true);
    gauge.record(0);
    expect(gauge.overloaded).toBe(false);
  });

  it('counts only samples in a row: a healthy one in between starts over', () => {
    const gauge = new LoopLagGauge();
    for (let i = 0; i < 10; i++) {
      gauge.record(LAGGING);
      gauge.record(MAX_EVENT_LOOP_DELAY_MS);
    }
    expect(gauge.overloaded).toBe(false);
  });
});
