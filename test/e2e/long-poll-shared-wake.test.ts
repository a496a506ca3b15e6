/**
 * One commit wakes many parked long-polls, and the waiters of one wake key share one evaluation and
 * one answer, serialized once (src/engagement/waiters.ts, long-poll.ts, src/runtime/shared-answer.ts).
 * Sharing must not change what anyone receives: every woken answer, body and headers, is the answer
 * the same caller gets from an immediate `wait=0` call with the same query at the same instant, which
 * builds and serializes its own, and its headers are those of the same call as HEAD, which fastify's
 * send path writes (a GET's shared answer is written outside it). Reader kinds: the creator, a member owed a choice, a member not
 * owed, an observer, an outsider (a mandate without a seat) on a public room; all three modes. The
 * route writes a woken GET's answer outside fastify's send path (src/http/routes.ts, sendShared): byte
 * for byte, on the wire, it is the answer the normal path writes (CORS and its Vary included), the
 * connection goes on serving, and the request is counted like any other.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { freshAgentKey, selfIssuedMandate } from '../support/mandates.js';
import { call, suiteService } from '../support/service.js';

// Self-issued mandates are stamped with the wall clock: the service's manual clock starts there.
const T0 = Math.floor(Date.now() / 1000) * 1000;

/** What differs between two answers by design: the instant and the request's own id. */
const PER_REQUEST = new Set(['date', 'x-correlation-id']);

interface Caller {
  name: string;
  headers: Record<string, string>;
}

/** An answer as it came over the wire: the head's lines (status line first) and the body. */
interface RawAnswer {
  head: string[];
  body: string;
}

/** One keep-alive connection spoken to byte for byte, one request at a time. */
class RawConnection {
  private received = Buffer.alloc(0);
  private arrived: (() => void) | null = null;
  private closed = false;

  private constructor(
    private readonly socket: net.Socket,
    private readonly host: string,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.arrived?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.arrived?.();
    });
  }

  static open(base: string): Promise<RawConnection> {
    const { hostname, port, host } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => resolve(new RawConnection(socket, host)));
      socket.once('error', reject);
    });
  }

  /** Sends one request; resolves with its answer (a HEAD answer has no body whatever its Content-Length). */
  async request(method: string, path: string, headers: Record<string, string>): Promise<RawAnswer> {
    const lines = [`${method} ${path} HTTP/1.1`, `host: ${this.host}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    for (;;) {
      const end = this.received.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.received.subarray(0, end).toString('latin1').split('\r\n');
        const declared = head.find((line) => /^content-length:/i.test(line))?.split(':')[1];
        const length = method === 'HEAD' ? 0 : Number(declared ?? 0);
        if (this.received.length >= end + 4 + length) {
          const body = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
          this.received = this.received.subarray(end + 4 + length);
          return { head, body };
        }
      }
      if (this.closed) throw new Error(`the connection closed before the answer to ${method} ${path}`);
      await new Promise<void>((resolve) => {
        this.arrived = resolve;
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A head's lines without those that differ per request by design (the instant, the request's id). */
const comparable = (answer: RawAnswer) =>
  answer.head.filter((line) => !PER_REQUEST.has(line.slice(0, line.indexOf(':')).toLowerCase()));

/** The Prometheus sample lines of /metrics, by name and labels. */
async function scrape(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\S+) (\S+)$/.exec(line);
    if (match && !line.startsWith('#')) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('a shared long-poll wake', () => {
  const clock = new ManualClock(T0);
  const svc = suiteService({ clock });

  const parked = () => svc().service.engagement.waiters.parked;
  const poll = (slug: string, caller: Caller, query: string) =>
    call(svc().base, 'GET', `/api/rooms/${slug}/next-action?${query}`, { headers: caller.headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Parks every (caller, query), then runs `commit`; resolves with each woken answer beside its wait=0 twin. */
  async function wokenBesideImmediate(slug: string, waits: [Caller, string][], commit: () => Promise<unknown>) {
    const before = parked();
    const answers = waits.map(([caller, query]) => poll(slug, caller, `${query}&wait=30`));
    await eventually(() => parked() === before + waits.length);
    await commit();
    const woken = await Promise.all(answers);
    const immediate = await Promise.all(waits.map(([caller, query]) => poll(slug, caller, `${query}&wait=0`)));
    const heads = await Promise.all(
      waits.map(([caller, query]) =>
        call(svc().base, 'HEAD', `/api/rooms/${slug}/next-action?${query}&wait=0`, { headers: caller.headers }),
      ),
    );
    return waits.map(([caller, query], i) => ({
      label: `${caller.name} ${query}`,
      woken: woken[i]!,
      immediate: immediate[i]!,
      head: heads[i]!,
    }));
  }

  function expectSameAnswers(pairs: Awaited<ReturnType<typeof wokenBesideImmediate>>) {
    for (const { label, woken, immediate, head } of pairs) {
      const headers = (r: typeof woken) => [...r.headers].filter(([name]) => !PER_REQUEST.has(name));
      expect({ label, status: woken.status, text: woken.text, headers: headers(woken) }).toEqual({
        label,
        status: immediate.status,
        text: immediate.text,
        headers: headers(immediate),
      });
      // fetch closes the connection after a HEAD (Node answers `connection: close`); the raw test below
      // compares a HEAD's head on a kept-alive connection.
      const kept = (r: typeof woken) => headers(r).filter(([name]) => name !== 'connection' && name !== 'keep-alive');
      expect({ label, status: woken.status, headers: kept(woken) }).toEqual({
        label,
        status: head.status,
        headers: kept(head),
      });
    }
  }

  it('gives every reader kind, in every mode, the answer it would get on its own', async () => {
    const { slug, tokens } = await seatedRoom(
      svc().base,
      { about: 'Shared wakes', config: { visibility: 'public', early_close: true, settle_window: 0 } },
      3,
    );
    const watcher = await call(svc().base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'watcher' } });
    const demoted = await call(svc().base, 'PATCH', `/api/rooms/${slug}/members/watcher`, {
      token: tokens[0],
      body: { role: 'observer' },
    });
    expect(demoted.body.participant.role).toBe('observer');
    const creator = { name: 'creator', headers: bearer(tokens[0]!) };
    const ann = { name: 'member ann', headers: bearer(tokens[1]!) };
    const bob = { name: 'member bob', headers: bearer(tokens[2]!) };
    const observer = { name: 'observer', headers: bearer(watcher.body.participant_token) };
    const outsider = { name: 'outsider', headers: { 'x-mandate': selfIssuedMandate(freshAgentKey()) } };
    const head = async () => (await svc().service.services.registry.read(slug))!.head;

    // The first decision opens: members become owed a choice; the others are told nothing can need them, or of the act.
    let since = await head();
    const opened = await wokenBesideImmediate(
      slug,
      [ann, bob, observer, outsider].flatMap((caller): [Caller, string][] => [
        [caller, 'for=my_choice'],
        [caller, `for=activity&since_seq=${since}`],
      ]),
      () =>
        call(svc().base, 'POST', `/api/rooms/${slug}/ask`, {
          headers: creator.headers,
          body: { question: 'Lunch?', options: ['soup', 'salad'] },
        }),
    );
    expect(opened.map(({ woken }) => woken.body.status)).toEqual([
      'actionable',
      'actionable',
      'actionable',
      'actionable',
      'timeout',
      'activity',
      'timeout',
      'activity',
    ]);
    expectSameAnswers(opened);

    // Ann chooses; Bob, still owed, decides it (two of three): completion for all, activity, and a
    // my_choice wait that nothing open can end any more.
    const chose = await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, {
      headers: ann.headers,
      body: { choice: 'soup' },
    });
    expect(chose.body.status).not.toBe('resolved');
    since = await head();
    const sealed = await wokenBesideImmediate(
      slug,
      [
        ...[creator, ann, bob, observer, outsider].map((caller): [Caller, string] => [
          caller,
          'for=completion&since_seq=0',
        ]),
        ...[ann, observer, outsider].map((caller): [Caller, string] => [caller, `for=activity&since_seq=${since}`]),
        [ann, 'for=my_choice'],
      ],
      () => call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { headers: bob.headers, body: { choice: 'soup' } }),
    );
    expect(sealed.map(({ woken }) => woken.body.status)).toEqual([
      ...Array(5).fill('actionable'),
      ...Array(3).fill('activity'),
      'timeout',
    ]);
    expect(sealed[0]!.woken.body.decision).toMatchObject({ status: 'resolved', resolved_winner: 'soup' });
    expectSameAnswers(sealed);
  });

  it('hands the waiters of one wake key one frozen answer', async () => {
    const { slug, tokens } = await seatedRoom(
      svc().base,
      { question: 'Ship?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
      2,
    );
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'yes' } });
    const state = await svc().service.services.registry.read(slug);
    const reader = { participantId: null, role: 'participant' as const, actor: null };
    const wait = (credential: string) =>
      svc().service.engagement.longPoll({
        slug,
        query: { mode: 'completion', reader, sinceSeq: 0 },
        waitSeconds: 30,
        claim: { address: '127.0.0.1', credential },
      });
    const before = parked();
    const answers = [wait('a'), wait('b')];
    await eventually(() => parked() === before + 2);
    expect(state?.head).toBeGreaterThan(0);
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'yes' } });
    const [first, second] = await Promise.all(answers);
    expect(first).toMatchObject({ status: 'actionable', for: 'completion', decision: { status: 'resolved' } });
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first!.decision)).toBe(true);
  });

  it('writes each woken answer byte for byte as the normal path does, and the connection serves on', async () => {
    const { slug, tokens } = await seatedRoom(
      svc().base,
      { question: 'Wire?', options: ['yes', 'no'], config: { early_close: true, settle_window: 0 } },
      2,
    );
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'yes' } });
    const path = (wait: number) => `/api/rooms/${slug}/next-action?for=completion&since_seq=0&wait=${wait}`;
    const origin = { origin: 'https://agents.example' };
    const callers = [
      { method: 'GET', headers: bearer(tokens[0]!) },
      { method: 'GET', headers: { ...bearer(tokens[0]!), ...origin } },
      { method: 'GET', headers: { ...bearer(tokens[1]!), ...origin, accept: 'application/json' } },
      { method: 'HEAD', headers: { ...bearer(tokens[1]!), ...origin } },
    ];
    const requests = 'conclave_http_requests_total{method="GET",route="/api/rooms/:slug/next-action",status="200"}';
    const durations = 'conclave_http_request_duration_seconds_count{method="GET",route="/api/rooms/:slug/next-action"}';
    const before = await scrape(svc().base);
    const connections = await Promise.all(callers.map(() => RawConnection.open(svc().base)));
    const parkedBefore = parked();
    const answers = callers.map(({ method, headers }, i) =>
      connections[i]!.request(method, path(30), { ...headers, 'x-correlation-id': `woken-${i}` }),
    );
    await eventually(() => parked() === parkedBefore + callers.length);
    await call(svc().base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'yes' } });
    const woken = await Promise.all(answers);
    // On the same connections: the same request answered at once, the same as HEAD, whose head
    // fastify's send path writes, then the GET again.
    for (const [i, { method, headers }] of callers.entries()) {
      const answer = woken[i]!;
      expect(answer.head[0]).toBe('HTTP/1.1 200 OK');
      expect(answer.head).toContain(`x-correlation-id: woken-${i}`);
      const immediate = await connections[i]!.request(method, path(0), headers);
      expect({ head: comparable(answer), body: answer.body }).toEqual({
        head: comparable(immediate),
        body: immediate.body,
      });
      if (method !== 'GET') continue;
      const head = await connections[i]!.request('HEAD', path(0), headers);
      expect(comparable(answer)).toEqual(comparable(head));
      expect(head.body).toBe('');
      const again = await connections[i]!.request('GET', path(0), headers);
      expect(again.body).toBe(answer.body);
    }
    for (const connection of connections) connection.close();
    expect(JSON.parse(woken[0]!.body)).toMatchObject({ status: 'actionable', decision: { status: 'resolved' } });
    expect(woken[1]!.head).toContain('vary: Origin');
    expect(woken[3]!.body).toBe('');

    // Every GET was counted: three woken, then twice three answered at once.
    await eventually(async () => {
      const after = await scrape(svc().base);
      return (after.get(requests) ?? 0) - (before.get(requests) ?? 0) === 9;
    });
    const after = await scrape(svc().base);
    expect((after.get(durations) ?? 0) - (before.get(durations) ?? 0)).toBe(9);
  });
});
