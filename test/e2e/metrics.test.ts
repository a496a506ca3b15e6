/**
 * `GET /metrics` parses as Prometheus text and moves with the load: requests by route template
 * (never a slug or a token), room batches and their commits, parked long-polls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';

let svc: RunningService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

/** Parses the text exposition format: every sample line is `name{labels} value`; comments are HELP/TYPE. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|NaN|[+-]Inf)$/i.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${line}`);
    samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

async function scrape(): Promise<Map<string, number>> {
  const response = await call(svc.base, 'GET', '/metrics');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(response.text);
}

describe('GET /metrics', () => {
  it('counts requests by route template, room batches, and parked long-polls', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Metrics?', options: ['a', 'b'], config: { early_close: true, settle_window: 0 } },
    });
    const { slug, creator_token: token } = created.body;
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: {} });
    const before = await scrape();
    const chooseKey = 'conclave_http_requests_total{method="POST",route="/api/rooms/:slug/choose",status="200"}';
    expect(before.get(chooseKey) ?? 0).toBe(0);
    expect(before.get('conclave_room_batch_turns_count')).toBeGreaterThanOrEqual(1);

    // A parked long-poll shows up, and leaves when the deciding choice wakes it.
    const waiting = call(svc.base, 'GET', `/api/rooms/${slug}/next-action?for=completion&wait=30`, {
      token: joined.body.participant_token,
    });
    await eventually(async () => (await scrape()).get('conclave_waiters_parked') === 1);
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'a' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: joined.body.participant_token,
      body: { choice: 'a' },
    });
    expect((await waiting).body.status).toBe('actionable');

    const after = await scrape();
    expect(after.get(chooseKey)).toBe(2);
    expect(after.get('conclave_waiters_parked')).toBe(0);
    expect(after.get('conclave_room_batch_turns_count')! - before.get('conclave_room_batch_turns_count')!).toBe(2);
    expect(after.get('conclave_room_commit_duration_seconds_count')).toBeGreaterThan(
      before.get('conclave_room_commit_duration_seconds_count')!,
    );
    expect(after.get('conclave_rooms_cached')).toBeGreaterThanOrEqual(1);
    expect(after.get('conclave_rooms_cached_bytes')).toBeGreaterThan(0);
    expect(after.has('conclave_process_resident_memory_bytes')).toBe(true);
    // Label values are route templates: no slug and no token ever appears.
    const text = (await call(svc.base, 'GET', '/metrics')).text;
    expect(text).not.toContain(slug);
    expect(text).not.toContain(token);
  });
});
