/**
 * A starting process answers liveness at once and says when it is ready (docs/operators.md, Health
 * and metrics): it listens before the start-up warm-up (src/warm-up.ts), /healthz answers 200
 * throughout, /readyz answers 503 not_ready until the warm-up has ended, and the warm-up stops
 * sending calls after WARMUP_MAX_MS however many turns it was given.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';

async function readyz(base: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: await response.json() };
}

describe('start-up: live at once, ready when warm', () => {
  let service: ChildService | undefined;
  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('answers liveness while warming up, and readiness 503 not_ready until the warm-up ends', async () => {
    // More turns than a few seconds hold, and all the time in the world for them: still warming below.
    service = await spawnService(
      { WARMUP_TURNS: '200000', WARMUP_MAX_MS: '600000', LOG_LEVEL: 'info' },
      { capture: true },
    );
    const health = await fetch(`${service.base}/healthz`);
    expect(health.status).toBe(200);
    expect(await readyz(service.base)).toEqual({ status: 503, body: { status: 'not_ready' } });
    expect(service.output()).toContain('conclave listening');
    expect(service.output()).not.toContain('conclave ready');
  }, 120_000);

  it('stops warming after WARMUP_MAX_MS and is then ready', async () => {
    service = await spawnService(
      { WARMUP_TURNS: '200000', WARMUP_MAX_MS: '300', LOG_LEVEL: 'info' },
      { capture: true },
    );
    let answer = await readyz(service.base);
    while (answer.status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await readyz(service.base);
    }
    expect(answer.body).toEqual({ status: 'ready' });
    const log = service.output();
    const warmed = log.split('\n').find((line) => line.includes('"warmed up"'));
    expect(warmed).toBeDefined();
    const report = JSON.parse(warmed!) as { turns: number; skipped: number; failures: number };
    expect(report.turns).toBe(200000);
    // Cut short: most calls were never sent, and none of those counts as a failure.
    expect(report.skipped).toBeGreaterThan(0);
    expect(report.failures).toBe(0);
    expect(log.indexOf('conclave listening')).toBeLessThan(log.indexOf('"warmed up"'));
    expect(log.indexOf('"warmed up"')).toBeLessThan(log.indexOf('conclave ready'));
  }, 120_000);
});
