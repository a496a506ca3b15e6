/**
 * Score and quadratic ballots as a list (docs/agents.md, One ballot, every framework): `scores`
 * stands for the option→points map in choice, on REST and MCP alike; the map stays accepted and
 * documented for REST; a list that is ambiguous is refused, naming the field. The MCP tool declares
 * choice without the open map, so its schema survives the agent frameworks' conversions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

describe('choose with scores', () => {
  let svc: RunningService;
  let mcp: McpSession;

  beforeAll(async () => {
    svc = await startService({ clock: new ManualClock() });
    mcp = await connectModern(`${svc.base}/mcp`);
  });
  afterAll(async () => {
    await mcp?.close();
    await svc?.stop();
  });

  async function room(mechanism: string) {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which?', options: ['alpha', 'beta', 'gamma'], config: { mechanism } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return { slug: created.body.slug as string, token: created.body.creator_token as string };
  }

  const choose = (slug: string, token: string, body: unknown) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body });

  it('records a scores list as the map it stands for, on REST and MCP', async () => {
    const { slug, token } = await room('score_vote');
    const listed = await choose(slug, token, {
      scores: [
        { option: 'gamma', points: 5 },
        { option: 1, points: 2 },
      ],
    });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.cast_choice).toEqual({ alpha: 2, gamma: 5 });
    const mapped = await choose(slug, token, { choice: { gamma: 5, '1': 2 } });
    expect(mapped.body).toMatchObject({ cast_choice: listed.body.cast_choice, revised: true });

    const quadratic = await room('quadratic_vote');
    const viaMcp = await ok(mcp, 'choose', {
      slug: quadratic.slug,
      token: quadratic.token,
      scores: [{ option: '#2', points: 4 }],
    });
    expect(viaMcp.cast_choice).toEqual({ beta: 4 });
  });

  it('refuses a list with an option twice, both fields at once, or an unknown key in an entry', async () => {
    const { slug, token } = await room('score_vote');
    const twice = await choose(slug, token, {
      scores: [
        { option: 'alpha', points: 1 },
        { option: 'alpha', points: 3 },
      ],
    });
    expect([twice.status, twice.body.error.code, twice.body.error.details.field]).toEqual([
      400,
      'input.invalid',
      'scores',
    ]);
    expect(twice.body.error.message).toContain('"alpha" twice');
    const both = await choose(slug, token, { choice: { alpha: 1 }, scores: [{ option: 'beta', points: 1 }] });
    expect([both.status, both.body.error.details.field]).toEqual([400, 'scores']);
    expect(both.body.error.message).toContain('choice or scores, not both');
    const stray = await choose(slug, token, { scores: [{ option: 'beta', points: 1, weight: 2 }] });
    expect([stray.status, stray.body.error.code]).toEqual([400, 'input.invalid']);
    // Two spellings of one option are the ballot check's to refuse, as in the map form.
    const aliased = await choose(slug, token, {
      scores: [
        { option: 'alpha', points: 1 },
        { option: 1, points: 3 },
      ],
    });
    expect([aliased.status, aliased.body.error.code]).toEqual([400, 'input.invalid']);
    expect(aliased.body.error.message).toContain('both name option 1');
    const neither = await choose(slug, token, { reason: 'no ballot' });
    expect(neither.body.error.message).toContain('or scores for a score or quadratic ballot');
  });

  it('declares choice without the open map on MCP, and keeps the map documented for REST', async () => {
    const tool = (await mcp.tools()).find((candidate) => candidate.name === 'choose')!;
    const { choice, scores } = tool.inputSchema.properties!;
    expect(tool.inputSchema.required).toEqual(['slug']);
    const kinds = (choice.anyOf as { type: string }[]).map((branch) => branch.type);
    expect(kinds).toEqual(['string', 'integer', 'array']);
    expect(choice.description).toContain('send scores instead');
    expect(scores.items).toMatchObject({ type: 'object', required: ['option', 'points'], additionalProperties: false });

    const document = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    const request = document.components.schemas.ChooseRequest;
    expect(request.properties.choice.anyOf.map((branch: { type: string }) => branch.type)).toEqual([
      'string',
      'integer',
      'array',
      'object',
    ]);
    expect(request.properties.scores.type).toBe('array');
    expect(request.allOf[0].anyOf.map((branch: { required: string[] }) => branch.required)).toEqual([
      ['choice'],
      ['scores'],
    ]);
  });
});
