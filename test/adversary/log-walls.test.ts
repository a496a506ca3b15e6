/**
 * The transparency log keeps each room's walls (docs/transparency-log.md): an outsider with no
 * credential reads the whole public log — every checkpoint, every hash tile, every entry bundle,
 * every proof — of a service whose rooms are private and unlisted, and finds nothing of them: no
 * slug, room URL, question, option, statement, display name or agent id, as is or base64-encoded,
 * in any byte. The log still verifies independently (leaf hashes, tiles, roots, signatures,
 * proofs), and a room's members, and only they, find each of its receipts in it. On SQLite and on
 * Redis.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { parseReceiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { vrfVerify } from '../../src/tlog/vrf.js';
import { crawlLog, findNeedles } from '../support/log-crawl.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

const PASSWORD = 'correct horse battery staple';

interface Room {
  slug: string;
  creator: string;
  member: string;
  needles: string[];
}

const payloadOf = (jws: string) =>
  JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
    svc: { room_id: string; sequence: number; votes?: { agent_id: string }[] };
  };

describe.each(['sqlite', 'redis'])('an outsider reading the whole log (%s)', (store) => {
  const clock = new ManualClock(Date.parse('2026-12-01T09:00:00Z'));
  let svc: RunningService;
  const rooms: Room[] = [];

  async function room(visibility: 'private' | 'unlisted', words: string[]): Promise<Room> {
    const [question, optionA, optionB, creatorName, memberName, statement] = words as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const secret = visibility === 'private' ? { password: PASSWORD } : {};
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: {
        question,
        options: [optionA, optionB],
        display_name: creatorName,
        ...secret,
        config: { visibility, voting_window: 60 },
      },
    });
    expect(created.status).toBe(200);
    const slug = created.body.slug as string;
    const creator = created.body.creator_token as string;
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      body: { display_name: memberName, ...secret },
    });
    expect(joined.status).toBe(200);
    const member = joined.body.participant_token as string;
    for (const token of [creator, member]) {
      expect(
        (await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: optionB } })).status,
      ).toBe(200);
    }
    clock.advance(61_000);
    await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token: creator });
    const closed = await call(svc.base, 'POST', `/api/rooms/${slug}/close`, { token: creator, body: { statement } });
    expect(closed.status).toBe(200);
    return { slug, creator, member, needles: [slug, ...words] };
  }

  beforeAll(async () => {
    const env: Record<string, string> =
      store === 'redis'
        ? { STORE: 'redis', REDIS_URL: redis?.url ?? '', REDIS_KEY_PREFIX: `walls-${Date.now()}:` }
        : {};
    if (store === 'redis' && !redis) throw new Error('redis-server is required for this test');
    svc = await startService({ clock, env });
    rooms.push(
      await room('private', [
        'Which vendor for the Kestrel migration?',
        'Aldergrove Systems',
        'Brindlewood Labs',
        'Mirela Vasquez-Oduya',
        'Tobias Quennell',
        'Brindlewood wins; the Kestrel budget review moves to March.',
      ]),
      await room('unlisted', [
        'Move the Halvorsen offsite to Lisbon?',
        'Lisbon in April',
        'Stay in Utrecht',
        'Oksana Pettersen-Blum',
        'Ravindra Okonkwo',
        'Utrecht again; Halvorsen travel is frozen this year.',
      ]),
      await room('unlisted', [
        'Rename the Quillfeather repository?',
        'Keep Quillfeather',
        'Call it Wrenfield',
        'Delphine Marchetti-Aalto',
        'Ignatius Brannock',
        'Wrenfield it is, from the next release.',
      ]),
    );
    // The receipts as a member reads them: the room URL and every voter's agent id are needles too.
    for (const r of rooms) {
      const outcome = (await call(svc.base, 'GET', `/api/rooms/${r.slug}/outcome`, { token: r.creator })).body;
      const jwss = [...(outcome.decisions as { receipt_jws: string }[]), outcome.conclusion as { receipt_jws: string }]
        .map((row) => row.receipt_jws)
        .filter((jws): jws is string => typeof jws === 'string');
      expect(jwss.length).toBe(2);
      for (const jws of jwss) {
        const { svc: claims } = payloadOf(jws);
        r.needles.push(claims.room_id, ...(claims.votes ?? []).map((vote) => vote.agent_id));
      }
    }
    await svc.service.integrator.integrateNow();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('finds no slug, room URL, question, option, statement, name or agent id in any byte of the log', async () => {
    const discovery = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log;
    const crawled = await crawlLog(svc.base, discovery.verifier_key as string);
    expect(crawled.latest.size).toBe(6);
    const needles = rooms.flatMap((r) => r.needles);
    expect(needles.length).toBeGreaterThan(30);
    expect(findNeedles(crawled.bodies, needles)).toEqual([]);
    // Nor can it tell which leaves belong together: six leaves, six different labels.
    const labels = crawled.leaves.map((leaf) => parseReceiptLeaf(leaf)?.label);
    expect(labels.every((label) => label instanceof Uint8Array)).toBe(true);
    expect(new Set(labels.map((label) => Buffer.from(label as Uint8Array).toString('hex'))).size).toBe(6);
    // There is no frozen log on a service that never had the old one.
    expect((await call(svc.base, 'GET', '/log/v1/checkpoint')).status).toBe(404);
    expect(discovery.frozen).toBeUndefined();
  });

  it('a member finds each of its receipts in the log under a proven label; an outsider is refused as /outcome refuses', async () => {
    const discovery = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log;
    const positionKeys = discovery.position_keys as { key_id: string; public_key: string }[];
    expect(positionKeys.length).toBe(1);
    const crawled = await crawlLog(svc.base, discovery.verifier_key as string);
    for (const r of rooms) {
      const outsider = await call(svc.base, 'GET', `/api/rooms/${r.slug}/log-positions`);
      const outsiderOutcome = await call(svc.base, 'GET', `/api/rooms/${r.slug}/outcome`);
      expect([outsider.status, outsider.body.error?.code]).toEqual([
        outsiderOutcome.status,
        outsiderOutcome.body.error?.code,
      ]);
      expect(outsider.status).toBeGreaterThanOrEqual(400);

      const answer = await call(svc.base, 'GET', `/api/rooms/${r.slug}/log-positions`, { token: r.member });
      expect(answer.status).toBe(200);
      const body = answer.body as {
        room_id: string;
        log_origin: string;
        positions: {
          sequence: number;
          receipt_hash: string | null;
          leaf_index: number | null;
          labels: { key_id: string; label: string; proof: string }[];
        }[];
      };
      expect(body.log_origin).toBe(discovery.origin);
      expect(body.positions.map((p) => p.sequence)).toEqual([1, 2, 3]);
      const outcome = (await call(svc.base, 'GET', `/api/rooms/${r.slug}/outcome`, { token: r.member })).body;
      const jwss = [
        ...(outcome.decisions as { receipt_jws: string }[]),
        outcome.conclusion as { receipt_jws: string },
      ].map((row) => row.receipt_jws);
      for (const position of body.positions) {
        const [label] = position.labels;
        const key = positionKeys.find((k) => k.key_id === label?.key_id);
        expect(key).toBeDefined();
        const output = vrfVerify(
          new Uint8Array(Buffer.from(key?.public_key ?? '', 'base64url')),
          new TextEncoder().encode(`conclave receipt position v1\n${body.room_id}\n${position.sequence}`),
          new Uint8Array(Buffer.from(label?.proof ?? '', 'base64url')),
        );
        expect(output && Buffer.from(output.slice(0, 32)).toString('base64')).toBe(label?.label);
        const holding = crawled.leaves
          .map((leaf, index) => ({ index, parsed: parseReceiptLeaf(leaf) }))
          .filter(({ parsed }) => parsed && Buffer.from(parsed.label).toString('base64') === label?.label);
        if (position.receipt_hash === null) {
          // The next, unused position: no leaf holds it.
          expect(holding).toEqual([]);
          expect(position.leaf_index).toBeNull();
          continue;
        }
        const jws = jwss[position.sequence - 1] as string;
        expect(position.receipt_hash).toBe(`sha256:${createHash('sha256').update(jws).digest('hex')}`);
        expect(holding.map(({ index }) => index)).toEqual([position.leaf_index]);
        expect(Buffer.from(holding[0]?.parsed?.commitment ?? []).toString('hex')).toBe(
          createHash('sha256').update(jws).digest('hex'),
        );
      }
    }
  });

  it('/outcome gives each receipt its position label and proof beside the inclusion proof', async () => {
    const r = rooms[0] as Room;
    const outcome = (await call(svc.base, 'GET', `/api/rooms/${r.slug}/outcome`, { token: r.member })).body;
    const positions = (await call(svc.base, 'GET', `/api/rooms/${r.slug}/log-positions`, { token: r.member })).body
      .positions as { leaf_index: number; labels: { key_id: string; label: string; proof: string }[] }[];
    const rows = [...(outcome.decisions as Record<string, unknown>[]), outcome.conclusion as Record<string, unknown>];
    rows.forEach((row, i) => {
      const field = row.transparency_log as { index: number; position: Record<string, string> };
      expect(field.index).toBe(positions[i]?.leaf_index);
      expect(field.position).toEqual(positions[i]?.labels[0]);
    });
  });
});
