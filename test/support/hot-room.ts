/**
 * A hot room: N agents seated in one room, then all of them choosing at once. Shared by the bench
 * case and the end-to-end test (which asserts the outcome, not the timings).
 */
import { Agent, request } from 'node:http';
import { verifyRoomReceiptChain } from '../../src/client/verify.js';

export interface HotRoomRun {
  slug: string;
  creatorToken: string;
  acknowledged: number;
  latenciesMs: number[];
  receipts: number;
  chainOk: boolean;
  chainErrors: string[];
  winner: unknown;
}

/** One POST on the agent's own connection: every agent is a separate client. */
function post(
  agent: Agent,
  url: string,
  token: string | null,
  body: unknown,
): Promise<{ status: number; body: Record<string, any> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Seats `agents` agents, each holding its own keep-alive connection (its seat is taken over it),
 * then has all of them choose — at once, or with their starts spread evenly over `spreadMs` — and
 * verifies the receipt chain.
 */
export async function runHotRoom(base: string, agents: number, spreadMs = 0): Promise<HotRoomRun> {
  const connections = Array.from({ length: agents }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    const created = await post(connections[0]!, `${base}/api/rooms`, null, {
      question: 'Which one, all together?',
      options: ['alpha', 'beta', 'gamma'],
      config: { early_close: true, settle_window: 0, max_participants: agents + 1 },
    });
    const slug = created.body.slug as string;
    const tokens = [created.body.creator_token as string];
    for (let i = 1; i < agents; i += 100) {
      const joined = await Promise.all(
        Array.from({ length: Math.min(100, agents - i) }, (_, j) =>
          post(connections[i + j]!, `${base}/api/rooms/${slug}/join`, null, { display_name: `agent ${i + j}` }),
        ),
      );
      tokens.push(...joined.map((j) => j.body.participant_token as string));
    }
    const latenciesMs: number[] = [];
    let acknowledged = 0;
    await Promise.all(
      tokens.map(async (token, i) => {
        if (spreadMs > 0) await new Promise((resolve) => setTimeout(resolve, (i * spreadMs) / agents));
        const started = performance.now();
        const answer = await post(connections[i]!, `${base}/api/rooms/${slug}/choose`, token, {
          choice: ['alpha', 'beta', 'gamma'][i % 3],
        });
        latenciesMs.push(performance.now() - started);
        if (answer.status === 200) acknowledged++;
      }),
    );
    const outcomeResponse = await fetch(`${base}/api/rooms/${slug}/outcome`, {
      headers: { authorization: `Bearer ${tokens[0]}` },
    });
    const outcome = (await outcomeResponse.json()) as Record<string, any>;
    const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json();
    const report = await verifyRoomReceiptChain(outcome, { jwks: jwks as never, room: 'from-body' });
    return {
      slug,
      creatorToken: tokens[0]!,
      acknowledged,
      latenciesMs: latenciesMs.sort((a, b) => a - b),
      receipts: report.receipts.length,
      chainOk: report.ok,
      chainErrors: report.errors,
      winner: outcome.resolved_winner,
    };
  } finally {
    for (const connection of connections) connection.destroy();
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
