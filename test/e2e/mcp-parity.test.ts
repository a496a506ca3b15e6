/**
 * Parity by construction, checked: one scenario (two decisions, discussion, a proposal, revisions,
 * closing) driven over REST in one room and over MCP in another yields the same responses, the same
 * room state and receipts that verify the same way, once slugs, ids, tokens, times and hashes are
 * masked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyOutcomeSignatures, verifyRoomReceiptChain } from '../../src/receipts/index.js';
import { connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';
import { withoutLogTiming } from '../support/tlog.js';

type Args = Record<string, unknown>;
/** Runs a tool-shaped step (tool name, arguments with slug and token) and returns the result object. */
type Driver = (tool: string, args: Args) => Promise<any>;

const REST_ROUTES: Record<string, [method: string, suffix: string]> = {
  create_room: ['POST', ''],
  join_room: ['POST', '/join'],
  read_room: ['GET', ''],
  discuss: ['POST', '/discuss'],
  propose: ['POST', '/options'],
  choose: ['POST', '/choose'],
  ask: ['POST', '/ask'],
  close_room: ['POST', '/close'],
  outcome: ['GET', '/outcome'],
  list_decisions: ['GET', '/decisions'],
};
const HOST_TOOLS = new Set(['create_room', 'list_decisions']);

function restDriver(base: string): Driver {
  return async (tool, { slug, token, ...fields }) => {
    const [method, suffix] = REST_ROUTES[tool]!;
    const path = slug === undefined ? '/api/rooms' : `/api/rooms/${slug}${suffix}`;
    const query = method === 'GET' ? `?${new URLSearchParams(fields as Record<string, string>)}` : '';
    const response = await call(base, method, `${path}${query}`, {
      ...(typeof token === 'string' ? { token } : {}),
      ...(method === 'POST' ? { body: fields } : {}),
    });
    if (response.status !== 200) throw new Error(`${tool} failed over REST: ${response.text}`);
    return 'ok' in response.body ? response.body : { ok: true, ...response.body };
  };
}

function mcpDriver(participant: McpSession, host: McpSession): Driver {
  return (tool, args) => ok(HOST_TOOLS.has(tool) ? host : participant, tool, args);
}

interface ScenarioRecord {
  steps: { tool: string; result: any }[];
  slug: string;
  annView: any;
  hostFull: any;
  outcome: any;
  decisions: any;
}

async function scenario(run: Driver): Promise<ScenarioRecord> {
  const steps: { tool: string; result: any }[] = [];
  const step = async (tool: string, args: Args) => {
    const result = await run(tool, args);
    steps.push({ tool, result });
    return result;
  };
  const created = await step('create_room', {
    question: 'Where do we meet?',
    options: ['alpha', 'beta'],
    display_name: 'host',
    config: { early_close: true, settle_window: 0 },
  });
  const slug = created.slug as string;
  const host = created.creator_token as string;
  const ann = (await step('join_room', { slug, display_name: 'ann' })).participant_token as string;
  const bob = (await step('join_room', { slug, display_name: 'bob' })).participant_token as string;
  await step('discuss', { slug, token: ann, body: 'alpha is closer to everyone', stance: 'agree' });
  await step('propose', { slug, token: bob, option: 'gamma' });
  await step('choose', { slug, token: ann, choice: 'beta' });
  await step('choose', { slug, token: ann, choice: 'alpha', reason: 'changed my mind' });
  await step('choose', { slug, token: bob, choice: 'gamma' });
  await step('choose', { slug, token: host, choice: 1 });
  await step('ask', { slug, token: host, question: 'Which day?', options: ['monday', 'tuesday'] });
  await step('choose', { slug, token: ann, choice: 'monday' });
  await step('choose', { slug, token: bob, choice: 'monday' });
  await step('close_room', { slug, token: host, statement: 'We meet at alpha on monday.' });
  return {
    steps,
    slug,
    annView: await run('read_room', { slug, token: ann }),
    hostFull: await run('read_room', { slug, token: host, include: 'full' }),
    outcome: await run('outcome', { slug, token: ann }),
    decisions: await run('list_decisions', { slug, token: host }),
  };
}

// JWS first: a signature may contain a run that looks like a token (t_ + 43 base64url chars).
const MASKS: [RegExp, string][] = [
  [/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, '<jws>'],
  [/t_[A-Za-z0-9_-]{43}/g, '<token>'],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>'],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>'],
  [/sha256:[0-9a-f]{64}/g, '<hash>'],
  [/http:\/\/127\.0\.0\.1:\d+/g, '<base>'],
];

/** The record with everything that must differ between two rooms masked. */
function masked(value: unknown, slug: string): unknown {
  let text = JSON.stringify(value).replaceAll(slug, '<slug>');
  for (const [pattern, mask] of MASKS) text = text.replace(pattern, mask);
  // A receipt's transparency-log proof appears once the log has sequenced it, which is timing.
  return withoutLogTiming(JSON.parse(text));
}

describe('REST and MCP parity', () => {
  let svc: RunningService;
  let participant: McpSession;
  let host: McpSession;
  let rest: ScenarioRecord;
  let mcp: ScenarioRecord;
  let jwks: { keys: unknown[] };

  beforeAll(async () => {
    svc = await startService();
    participant = await connectModern(`${svc.base}/mcp`);
    host = await connectModern(`${svc.base}/mcp/host`);
    rest = await scenario(restDriver(svc.base));
    mcp = await scenario(mcpDriver(participant, host));
    jwks = (await call(svc.base, 'GET', '/.well-known/jwks.json')).body;
  });
  afterAll(async () => {
    await participant?.close();
    await host?.close();
    await svc.stop();
  });

  it('runs the scenario in two different rooms', () => {
    expect(rest.slug).not.toBe(mcp.slug);
    expect(mcp.outcome).toMatchObject({ status: 'concluded', resolved_winner: 'monday' });
  });

  it('answers every step the same way', () => {
    expect(mcp.steps.map((s) => s.tool)).toEqual(rest.steps.map((s) => s.tool));
    mcp.steps.forEach((step, i) => {
      expect(masked(step.result, mcp.slug), `step ${i} (${step.tool})`).toEqual(
        masked(rest.steps[i]!.result, rest.slug),
      );
    });
  });

  it('ends in the same room state', () => {
    expect(masked(mcp.annView, mcp.slug)).toEqual(masked(rest.annView, rest.slug));
    expect(masked(mcp.hostFull, mcp.slug)).toEqual(masked(rest.hostFull, rest.slug));
    expect(masked(mcp.decisions, mcp.slug)).toEqual(masked(rest.decisions, rest.slug));
    expect(masked(mcp.outcome, mcp.slug)).toEqual(masked(rest.outcome, rest.slug));
  });

  it('produces receipt chains that verify the same way', () => {
    for (const record of [rest, mcp]) {
      expect(verifyRoomReceiptChain(record.outcome)).toEqual({ ok: true, errors: [] });
      expect(verifyOutcomeSignatures(record.outcome, jwks)).toEqual({ ok: true, errors: [] });
      expect(record.outcome.decisions.map((d: any) => d.resolved_winner ?? d.winner)).toEqual(['alpha', 'monday']);
      expect(record.outcome.conclusion.prev_hash).toBe(record.outcome.decisions[1].receipt_hash);
    }
  });
});
