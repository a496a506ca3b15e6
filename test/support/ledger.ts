/**
 * Mixed load that keeps books: rooms created, joined, discussed, decided and closed through a base
 * URL, every write retried with its own Idempotency-Key until acknowledged (as a careful client
 * would through faults), and every acknowledgement remembered. `audit` then reads each room back
 * and checks that everything acknowledged is there exactly once: contiguous seqs, no duplicated
 * events, and a receipt chain that verifies against the JWKS.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Jwks, verifyRoomReceiptChain } from '../../src/client/verify.js';

export interface RoomBook {
  slug: string;
  tokens: string[];
  said: string[];
  asked: number;
  closed: boolean;
}

export interface Ledger {
  rooms: RoomBook[];
  acknowledged: number;
  /** Writes that needed more than one attempt, and how long from the first failure to success (ms). */
  recoveries: number[];
  /** Answers seen on failed attempts, by status (0 = no answer; "503 without Retry-After" apart). */
  failures: Record<string, number>;
}

export function newLedger(): Ledger {
  return { rooms: [], acknowledged: 0, recoveries: [], failures: {} };
}

/** What a fault may answer: no answer at all, a proxy's 502/504, the service's 503 (and 500, reported). */
const RETRYABLE = new Set([0, 429, 500, 502, 503, 504]);

/** One write, retried with the same key until a 2xx (or `giveUpMs`). */
export async function write(
  ledger: Ledger,
  base: () => string,
  path: string,
  body: unknown,
  token?: string,
  giveUpMs = 30_000,
): Promise<any> {
  const key = randomUUID();
  let started = Date.now();
  let firstFailure: number | null = null;
  for (;;) {
    let status = 0;
    let retryAfterS = 0;
    let parsed: any = null;
    try {
      const response = await fetch(`${base()}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': key,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      status = response.status;
      retryAfterS = Number(response.headers.get('retry-after')) || 0;
      parsed = await response.json().catch(() => null);
    } catch {
      status = 0;
    }
    if (status >= 200 && status < 300) {
      ledger.acknowledged++;
      if (firstFailure !== null) ledger.recoveries.push(Date.now() - firstFailure);
      return parsed;
    }
    ledger.failures[status] = (ledger.failures[status] ?? 0) + 1;
    // A 503 tells the client when to retry (docs/architecture.md, Errors): one without is counted apart.
    if (status === 503 && retryAfterS === 0) {
      ledger.failures['503 without Retry-After'] = (ledger.failures['503 without Retry-After'] ?? 0) + 1;
    }
    if (!RETRYABLE.has(status)) {
      throw new Error(`${path} answered ${status}: ${JSON.stringify(parsed)}`);
    }
    if (status === 429) {
      // A rate limit is not a fault: wait as told, and neither that wait nor the refusal counts towards
      // giving up or towards recovery times (a seat that spent its minute's budget early waits out
      // the rest of the minute, longer than giveUpMs).
      const waitMs = Math.min(60, Math.max(1, retryAfterS)) * 1000;
      await sleep(waitMs);
      started += waitMs;
      continue;
    }
    firstFailure ??= Date.now();
    if (Date.now() - started > giveUpMs) throw new Error(`${path} was not acknowledged within ${giveUpMs} ms`);
    await sleep(50);
  }
}

/** A room with three seats that discusses, decides and asks again until `until`, then closes. */
export async function runRoom(ledger: Ledger, base: () => string, until: number): Promise<void> {
  const created = await write(ledger, base, '/api/rooms', {
    question: 'Which way?',
    options: ['north', 'south'],
    config: { early_close: true, settle_window: 0, voting_window: 3600 },
  });
  const book: RoomBook = { slug: created.slug, tokens: [created.creator_token], said: [], asked: 0, closed: false };
  ledger.rooms.push(book);
  for (const name of ['second', 'third']) {
    const joined = await write(ledger, base, `/api/rooms/${book.slug}/join`, { display_name: name });
    book.tokens.push(joined.participant_token);
  }
  for (;;) {
    for (const token of book.tokens.slice(0, 2)) {
      const text = `note ${randomUUID()}`;
      await write(ledger, base, `/api/rooms/${book.slug}/discuss`, { body: text }, token);
      book.said.push(text);
    }
    // Two of three choosing the same option decide it (early close, no settle window).
    for (const token of book.tokens.slice(0, 2)) {
      await write(ledger, base, `/api/rooms/${book.slug}/choose`, { choice: 1 }, token);
    }
    if (Date.now() >= until) break;
    await write(
      ledger,
      base,
      `/api/rooms/${book.slug}/ask`,
      { question: `Again ${book.asked + 1}?`, options: ['north', 'south'] },
      book.tokens[0],
    );
    book.asked++;
  }
  await write(ledger, base, `/api/rooms/${book.slug}/close`, { statement: 'done' }, book.tokens[0]);
  book.closed = true;
}

export async function allEvents(base: string, slug: string, token: string): Promise<any[]> {
  const events: any[] = [];
  for (let after = 0; ; ) {
    const response = await fetch(`${base}/api/rooms/${slug}/events?since_seq=${after}&limit=1000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const page = (await response.json()) as { events: any[]; has_more: boolean };
    events.push(...page.events);
    if (!page.has_more) return events;
    after = page.events.at(-1).seq;
  }
}

/** Every problem found in the books, as text; empty when everything acknowledged is there once. */
export async function audit(ledger: Ledger, base: string): Promise<{ problems: string[]; receipts: number }> {
  const problems: string[] = [];
  const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as Jwks;
  let receipts = 0;
  for (const book of ledger.rooms) {
    const events = await allEvents(base, book.slug, book.tokens[0]!);
    const seqs = events.map((e) => e.seq);
    if (seqs.some((seq, i) => seq !== i + 1)) problems.push(`${book.slug}: seqs are not 1..${seqs.length}`);
    if (new Set(events.map((e) => e.id)).size !== events.length) problems.push(`${book.slug}: an event id repeats`);
    const posted = events.filter((e) => e.event_type === 'discussion.posted').map((e) => e.data.body ?? e.data.text);
    for (const text of book.said) {
      const times = posted.filter((body) => body === text).length;
      if (times !== 1) problems.push(`${book.slug}: "${text}" stored ${times} times`);
    }
    if (posted.length !== book.said.length) {
      problems.push(`${book.slug}: ${posted.length} messages stored, ${book.said.length} acknowledged`);
    }
    const opened = events.filter((e) => e.event_type === 'decision.opened').length;
    if (opened !== 1 + book.asked)
      problems.push(`${book.slug}: ${opened} decisions opened, ${1 + book.asked} acknowledged`);
    const concluded = events.filter((e) => e.event_type === 'room.concluded').length;
    if (concluded !== (book.closed ? 1 : 0)) problems.push(`${book.slug}: concluded ${concluded} times`);
    const outcome = await (
      await fetch(`${base}/api/rooms/${book.slug}/outcome`, { headers: { authorization: `Bearer ${book.tokens[0]}` } })
    ).json();
    const report = await verifyRoomReceiptChain(outcome, { jwks, room: 'from-body' });
    receipts += report.receipts.length;
    if (!report.ok) problems.push(`${book.slug}: chain ${report.errors.join('; ')}`);
  }
  return { problems, receipts };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
