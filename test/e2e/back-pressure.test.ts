/**
 * Back-pressure on a real service in this process: a loop that lags sample after sample refuses new
 * requests with the 503 envelope and Retry-After; one long synchronous pause does not (the contract
 * suite's in-process service answered 503 to the requests after its test compiled a large schema).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_LOOP_DELAY_MS } from '../../src/http/back-pressure.js';
import { call, type RunningService, startService } from '../support/service.js';

let svc: RunningService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.stop();
});

/** Holds this process's event loop for `ms` of wall-clock time. */
function hold(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: nothing else in this process runs
  }
}

describe('back-pressure', () => {
  it('serves the requests that follow one long pause of the loop', async () => {
    // A pause just under the limit makes the sampler's tick fall due: it fires right after the pause,
    // with a mean under the limit. Then the loop turns a few times (each timer fire on record), and
    // one long pause lands in the next sample nearly alone: that sample lags far over the limit.
    await sleep(500);
    hold(MAX_EVENT_LOOP_DELAY_MS - 10);
    await sleep(25);
    hold(4 * MAX_EVENT_LOOP_DELAY_MS);
    await sleep(20); // the sampler's overdue tick records the pause
    const after = await call(svc.base, 'GET', '/api/rooms/nosuchroom');
    expect(after.status).toBe(404);
  });

  it('refuses with the 503 envelope and Retry-After while the loop lags sample after sample', async () => {
    // Pauses longer than the limit with a turn of the loop between them, until the request is answered.
    let answered = false;
    const lagging = (async () => {
      while (!answered) {
        hold(MAX_EVENT_LOOP_DELAY_MS + 150);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    // The gauge needs samples that lag in a row; ask until it refuses (each ask waits out pauses).
    let refused = await call(svc.base, 'GET', '/api/rooms/nosuchroom');
    for (let ask = 1; ask < 8 && refused.status !== 503; ask++) {
      refused = await call(svc.base, 'GET', '/api/rooms/nosuchroom');
    }
    answered = true;
    await lagging;
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('vendor:conclave:unavailable');
    expect(refused.headers.get('retry-after')).toBe('2');

    await sleep(2200); // two healthy samples
    expect((await call(svc.base, 'GET', '/api/rooms/nosuchroom')).status).toBe(404);
  });
});
