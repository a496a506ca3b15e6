/**
 * ConclaveClient end to end over real HTTP: every method against a real service, the error classes,
 * idempotency, retries that honour Retry-After, aborts, the SSE iterator resuming after the server
 * side drops the connection (through a TCP proxy that cuts it), and waitForOutcome.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConclaveClient, ConclaveError, ConclaveNetworkError, verifyRoomReceiptChain } from '../../src/client/index.js';
import { ROUTES } from '../../src/client/routes.js';
import { OPERATIONS } from '../../src/operations/table.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually } from '../support/engagement.js';
import { type RunningService, startService } from '../support/service.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN_TOKEN = 'client-test-admin-token-0123456789abcdef';

/** A TCP proxy in front of the service whose open connections the test can cut at will. */
async function startProxy(target: string): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('ConclaveClient over real HTTP', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let receiver: WebhookReceiver;
  let anonymous: ConclaveClient;
  let owner: ConclaveClient;
  let member: ConclaveClient;
  let slug: string;
  let memberId: string;

  beforeAll(async () => {
    svc = await startService({ clock, env: { CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    receiver = await startReceiver();
    anonymous = new ConclaveClient({ baseUrl: svc.base });
    const created = await anonymous.createRoom({
      question: 'Which way?',
      options: ['north', 'south'],
      config: { voting_window: 600 },
      display_name: 'owner',
    });
    slug = created.slug;
    owner = new ConclaveClient({ baseUrl: svc.base, token: created.creator_token });
    const joined = await anonymous.joinRoom({ slug, display_name: 'member' });
    memberId = joined.participant_id ?? '';
    member = new ConclaveClient({ baseUrl: svc.base, token: joined.participant_token ?? undefined });
  });
  afterAll(async () => {
    await receiver?.close();
    await svc?.stop();
  });

  it('describes exactly the routes the server serves', () => {
    for (const spec of Object.values(ROUTES)) {
      if (!('operation' in spec)) continue;
      const operation = OPERATIONS.find((op) => op.name === spec.operation);
      expect(operation, spec.operation).toBeDefined();
      expect({ method: spec.method, path: spec.path, source: spec.source, mutating: spec.mutating }).toEqual({
        method: operation!.method,
        path: operation!.path,
        source: operation!.inputSource,
        mutating: operation!.mutating,
      });
    }
  });

  it('reads the meta documents', async () => {
    expect((await anonymous.discover()).transports.rest).toBe(`${svc.base}/api/rooms`);
    expect(await anonymous.health()).toMatchObject({ status: 'ok' });
    expect((await anonymous.jwks()).keys.length).toBeGreaterThan(0);
  });

  it('reads the room, in full and as a delta', async () => {
    const view = await member.getRoom({ slug });
    expect(view.decision?.question).toBe('Which way?');
    const positional = await member.getRoom(slug, { include: 'full' });
    expect(positional).toBeDefined();
    const delta = await member.readDelta({ slug, since: 0 });
    expect(delta).toBeDefined();
    const machine = await member.getRoomMachine({ slug });
    expect(machine.room.state).toBe('room.active.deciding');
    expect(machine.decisions[0]?.active).toEqual(['decision.voting', 'decision.voting.open']);
  });

  it('acts on a decision: discuss, propose, choose, abstain, list and outcome', async () => {
    expect(await member.discuss({ slug, body: 'North has the view.', stance: 'extend' })).toMatchObject({ ok: true });
    expect(await member.propose({ slug, option: 'east' })).toBeDefined();
    expect(await owner.choose({ slug, choice: 'north' })).toBeDefined();
    expect(await member.choose(slug, { choice: 'east' })).toBeDefined();
    expect(await member.abstain({ slug, reason: 'conflict of interest' })).toBeDefined();
    const decisions = await member.listDecisions({ slug });
    expect(decisions.decisions).toHaveLength(1);
    const outcome = await member.outcome({ slug });
    expect(outcome.decisions[0]?.receipt_hash).toBeNull();
    expect(await member.awaitNextAction({ slug, wait: 0 })).toHaveProperty('status');
    const events = await member.listEvents({ slug, since_seq: 0, limit: 50 });
    expect(events.events.length).toBeGreaterThan(3);
  });

  it('types a ballot by the mechanism it names, and never sends the name', async () => {
    const sent: unknown[] = [];
    const recording: typeof fetch = (input, init) => {
      if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
      return fetch(input, init);
    };
    const room = await anonymous.createRoom({
      question: 'How much of each?',
      options: ['north', 'south'],
      config: { mechanism: 'quadratic_vote' },
    });
    const voter = new ConclaveClient({ baseUrl: svc.base, token: room.creator_token, fetch: recording });
    const listed = await voter.choose({
      slug: room.slug,
      mechanism: 'quadratic_vote',
      scores: [{ option: 'south', points: 4 }],
    });
    expect(listed.cast_choice).toEqual({ south: 4 });
    const mapped = await voter.choose<'quadratic_vote'>(room.slug, { choice: { north: 1 } });
    expect(mapped.cast_choice).toEqual({ north: 1 });
    expect(sent).toEqual([{ scores: [{ option: 'south', points: 4 }] }, { choice: { north: 1 } }]);
  });

  it('manages invites, roles, settings and webhooks', async () => {
    const invite = await owner.createInvite({ slug, label: 'for a colleague' });
    const code = invite.invite.code as string;
    expect(typeof code).toBe('string');
    expect((await owner.listInvites({ slug })).invites.length).toBeGreaterThan(0);
    expect(await owner.revokeInvite({ slug, code })).toBeDefined();
    expect((await owner.updateMemberRole({ slug, participant: memberId, role: 'observer' })).participant.role).toBe(
      'observer',
    );
    await owner.updateMemberRole({ slug, participant: memberId, role: 'participant' });
    expect(await owner.updateRoomSettings({ slug, settings: { voting_window: 900 } })).toBeDefined();
    const hook = await owner.registerWebhook({ slug, url: receiver.url });
    expect((await owner.listWebhooks({ slug })).webhooks.map((w) => w.id)).toContain(hook.webhook_id);
    expect(await owner.unregisterWebhook({ slug, id: hook.webhook_id })).toEqual({ ok: true });
  });

  it('asks, starts choosing a slate, and waits for an outcome that verifies', async () => {
    clock.advance(700_000); // the first decision's window ends: it seals, freeing the open-decision slot
    await svc.service.scheduler.runDue();
    const asked = await owner.ask({
      slug,
      question: 'Which day?',
      options: [],
      proposal_window: 600,
      voting_window: 60,
    } as any);
    expect(asked).toBeDefined();
    await member.propose({ slug, option: 'monday', decision: 2 });
    expect(await owner.startChoosing({ slug, decision: 2 })).toBeDefined();
    await owner.choose({ slug, choice: 'monday', decision: 2 });
    const waiting = owner.waitForOutcome({ slug, decision: 2, timeoutMs: 20_000 });
    clock.advance(3_600_000);
    await svc.service.scheduler.runDue();
    const outcome = await waiting;
    expect(outcome.decisions.find((d) => d.seq === 2)?.receipt_hash).toMatch(/^sha256:/);
    const report = await verifyRoomReceiptChain(outcome, { jwks: await anonymous.jwks(), room: 'from-body' });
    expect(report.errors).toEqual([]);
  });

  it('waits for an earlier decision without spinning while a later one is already sealed', async () => {
    const created = await anonymous.createRoom({
      question: 'First?',
      options: ['a', 'b'],
      config: { max_open_decisions: 2, early_close: true, settle_window: 0, voting_window: 600 },
      display_name: 'owner',
    });
    const room = created.slug;
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const opener = new ConclaveClient({ baseUrl: svc.base, token: created.creator_token, fetch: counting });
    const other = new ConclaveClient({
      baseUrl: svc.base,
      token: (await anonymous.joinRoom({ slug: room, display_name: 'other' })).participant_token ?? undefined,
    });
    await opener.ask({ slug: room, question: 'Second?', options: ['x', 'y'] } as any);
    await opener.choose({ slug: room, choice: 'x', decision: 2 });
    await other.choose({ slug: room, choice: 'x', decision: 2 });
    expect((await opener.outcome({ slug: room })).decisions.find((d) => d.seq === 2)?.receipt_hash).toMatch(/^sha256:/);
    requests = 0;
    const waiting = opener.waitForOutcome({ slug: room, decision: 1, timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A wait for completion past decision 0 answers at once with sealed decision 2: looping on it
    // made hundreds of requests in this half second.
    expect(requests).toBeLessThanOrEqual(4);
    await opener.choose({ slug: room, choice: 'a', decision: 1 });
    await other.choose({ slug: room, choice: 'a', decision: 1 });
    const outcome = await waiting;
    expect(outcome.decisions.find((d) => d.seq === 1)?.receipt_hash).toMatch(/^sha256:/);
  });

  it('lists the rooms a token holds a seat in (MCP list_rooms)', async () => {
    const listed = await member.listRooms();
    expect(listed.rooms.map((r: any) => r.slug)).toContain(slug);
  });

  it('streams events and resumes after the server side drops the connection, with no gap and no duplicate', async () => {
    const proxy = await startProxy(svc.base);
    const viaProxy = new ConclaveClient({
      baseUrl: proxy.url,
      token: (owner as any).transport.options.defaultAuth.token,
    });
    const controller = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const event of viaProxy.streamEvents({ slug, since_seq: 0, signal: controller.signal })) {
        seen.push(event.data.seq);
      }
    })();
    const head = (await member.listEvents({ slug, since_seq: 0, limit: 500 })).events.at(-1)?.seq as number;
    await eventually(() => seen.includes(head));
    proxy.cut();
    for (let i = 0; i < 3; i++) await member.discuss({ slug, body: `after the cut ${i}` });
    await eventually(() => seen.includes(head + 3), 10_000);
    controller.abort();
    await reading;
    await proxy.close();
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => seen[0]! + i));
  });

  it('throws ConclaveError with the envelope, and ConclaveNetworkError without an answer', async () => {
    const error = await member.getRoom({ slug: 'nosuchroom' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConclaveError);
    expect(error).toMatchObject({ code: 'room.not_found', status: 404 });
    expect((error as ConclaveError).requestId).toEqual(expect.any(String));
    const offline = new ConclaveClient({ baseUrl: 'http://127.0.0.1:9' });
    const down = await offline.health().catch((e: unknown) => e);
    expect(down).toBeInstanceOf(ConclaveNetworkError);
    expect((down as ConclaveNetworkError).kind).toBe('network');
    const controller = new AbortController();
    controller.abort();
    const aborted = await member.getRoom({ slug, signal: controller.signal }).catch((e: unknown) => e);
    expect(aborted).toMatchObject({ name: 'ConclaveNetworkError', kind: 'aborted' });
  });

  it('sends an Idempotency-Key on mutations, so a retry replays instead of acting twice', async () => {
    const first = await member.discuss({ slug, body: 'once', idempotencyKey: 'client-key-1' });
    const again = await member.discuss({ slug, body: 'once', idempotencyKey: 'client-key-1' });
    expect(again.id).toBe(first.id);
    const sent: (string | null)[] = [];
    const spying = new ConclaveClient({
      baseUrl: svc.base,
      token: (member as any).transport.options.defaultAuth.token,
      fetch: (url, init) => {
        sent.push(new Headers(init?.headers).get('idempotency-key'));
        return fetch(url, init);
      },
    });
    await spying.discuss({ slug, body: 'keyed' });
    await spying.getRoom({ slug });
    expect(sent[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]).toBeNull();
  });

  it('retries 503 and 429 when asked, honouring Retry-After with the same Idempotency-Key', async () => {
    const keys: (string | null)[] = [];
    let refusals = 2;
    const flaky = new ConclaveClient({
      baseUrl: svc.base,
      token: (member as any).transport.options.defaultAuth.token,
      retry: { attempts: 3 },
      fetch: async (url, init) => {
        keys.push(new Headers(init?.headers).get('idempotency-key'));
        if (refusals-- > 0) {
          return new Response(JSON.stringify({ error: { code: 'vendor:conclave:unavailable', message: 'busy' } }), {
            status: refusals === 1 ? 503 : 429,
            headers: { 'retry-after': '0', 'content-type': 'application/json' },
          });
        }
        return fetch(url, init);
      },
    });
    expect(await flaky.discuss({ slug, body: 'eventually' })).toMatchObject({ ok: true });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    const noRetry = new ConclaveClient({
      baseUrl: svc.base,
      fetch: async () => new Response('{"error":{"code":"rate_limit.exceeded","message":"slow"}}', { status: 429 }),
    });
    await expect(noRetry.health()).rejects.toMatchObject({ code: 'rate_limit.exceeded', status: 429 });
  });

  it('runs the device authorization flow endpoints, surfacing OAuth errors as codes', async () => {
    const started = await anonymous.startDeviceAuthorization({ client_id: 'conclave-cli', agent_slug: 'my-agent' });
    expect(started.device_code).toEqual(expect.any(String));
    const pending = await anonymous
      .pollDeviceToken({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.device_code,
        client_id: 'conclave-cli',
      })
      .catch((e: unknown) => e);
    expect(pending).toBeInstanceOf(ConclaveError);
    expect((pending as ConclaveError).code).toBe('authorization_pending');
  });

  it('closes and deletes a room', async () => {
    clock.advance(3_600_000);
    expect(await owner.closeRoom({ slug, statement: 'Settled.' })).toBeDefined();
    const admin = new ConclaveClient({ baseUrl: svc.base, token: ADMIN_TOKEN });
    expect(await admin.deleteRoom({ slug })).toBeDefined();
    await expect(member.getRoom({ slug })).rejects.toMatchObject({ code: 'room.not_found' });
  });
});
