/**
 * The code of docs/agents.md and docs/receipts.md, run as written against a real service: the client
 * library loop, the MCP SDK loop and the receipt check. The bodies below mirror the guide's snippets
 * (only the loops' exits are added); when a snippet stops compiling or working here, fix the guide.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConclaveClient, ConclaveError, verifyRoomReceiptChain } from '../../src/client/index.js';
import { call, type RunningService, startService } from '../support/service.js';

describe('the snippets of the agent guide', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  /** A room whose first decision seals once both of its two members have chosen. */
  async function twoSeatRoom(): Promise<{ slug: string; host: string }> {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: {
        question: 'Where do we meet?',
        options: ['alpha', 'beta'],
        config: { early_close: true, settle_window: 0 },
      },
    });
    return { slug: created.body.slug, host: created.body.creator_token };
  }

  it('docs/agents.md, The client library: join, wait, read, choose', async () => {
    const { slug, host } = await twoSeatRoom();
    const base = svc.base;
    const seat = await new ConclaveClient({ baseUrl: base }).joinRoom({ slug, display_name: 'scout' });
    // participant_token is null only for a seat joined with a mandate.
    const me = new ConclaveClient({ baseUrl: base, token: seat.participant_token as string });

    let chosen = false;
    while (!chosen) {
      const next = await me.awaitNextAction({ slug, wait: 25 });
      const view = await me.getRoom({ slug });
      // A timeout: wait again, unless nothing is open (it then came at once; next.hint says why).
      if (next.status !== 'actionable') {
        if (view.decision === null) break; // read the outcome, or wait for the next decision with since
        continue;
      }
      const first = view.decision?.options[0]; // the open decision's first option
      if (first === undefined) continue;
      try {
        await me.choose({ slug, decision: next.decision.seq, choice: first, reason: 'first' });
        chosen = true;
      } catch (error) {
        if (error instanceof ConclaveError && error.code === 'decision.not_open') break; // it sealed first
        throw error;
      }
    }
    expect(chosen).toBe(true);
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: host, body: { choice: 'alpha' } });

    // docs/receipts.md, From code: the client library.
    const client = new ConclaveClient({ baseUrl: base, token: seat.participant_token as string });
    const report = await verifyRoomReceiptChain(await client.outcome({ slug }), {
      jwks: await client.jwks(),
      room: `${base}/r/${slug}`,
    });
    expect(report.errors).toEqual([]);
    expect(report.ok).toBe(true);
    const [first] = report.receipts;
    expect([first?.label, first?.signature, first?.hash, first?.link, first?.replay]).toEqual([
      'decisions[0]',
      true,
      true,
      true,
      true,
    ]);
  });

  it('docs/agents.md, MCP: the TypeScript SDK loop', async () => {
    const { slug, host } = await twoSeatRoom();
    const client = new Client({ name: 'my-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`)));
    const seat = await client.callTool({ name: 'join_room', arguments: { slug, display_name: 'scout' } });
    const token = (seat.structuredContent as { participant_token: string }).participant_token;
    for (;;) {
      const next = await client.callTool({ name: 'wait', arguments: { slug, token, wait_seconds: 25 } });
      const answer = next.structuredContent as { status: string; decision?: { status: string } };
      if (answer.status === 'timeout') {
        // At once when nothing open can need you (the hint says why): stop then, or wait with since.
        const room = await client.callTool({ name: 'read_room', arguments: { slug, token } });
        if ((room.structuredContent as { decision: unknown }).decision === null) break;
        continue;
      }
      if (answer.decision?.status === 'resolved') break; // a decision you opened sealed
      const chosen = await client.callTool({
        name: 'choose',
        arguments: { slug, token, choice: 1, reason: 'first is fine' },
      });
      expect(chosen.isError).not.toBe(true);
      break;
    }
    await client.close();
    const last = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: host, body: { choice: 'alpha' } });
    expect(last.body).toMatchObject({ status: 'resolved', resolved_winner: 'alpha' });
  });
});
