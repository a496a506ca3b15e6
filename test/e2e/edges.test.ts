/**
 * The envelope for every error, even those raised before a route runs (router failures, Node's HTTP
 * parser, a missing Host, oversized bodies however they are sent), and no credential in any log line
 * at any level, wherever a client wrongly puts it.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { call } from '../support/service.js';

const exec = promisify(execFile);

/** Sends raw bytes and returns the status line and parsed body of the answer. */
function rawExchange(base: string, text: string): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = answer.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      try {
        resolve({ status, headers: head.toLowerCase(), body: JSON.parse(rest.join('\r\n\r\n')) });
      } catch {
        reject(new Error(`not a JSON answer: ${answer.slice(0, 300)}`));
      }
    });
  });
}

const FIVE_MIB = 5 * 1024 * 1024;

describe('errors outside routes are envelopes; logs hold no secrets', () => {
  let svc: ChildService;
  beforeAll(async () => {
    svc = await spawnService({ LOG_LEVEL: 'trace', RATE_LIMIT_IP_PER_MIN: '0' }, { capture: true });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const cases: [string, string, number][] = [
    ['bad percent-encoding', 'GET /api/rooms/%ff HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['over-long path segment', `GET /api/rooms/${'a'.repeat(300)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    [
      'two Content-Lengths',
      'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      400,
    ],
    ['negative Content-Length', 'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}', 400],
    [
      'bad chunking',
      'POST /api/rooms HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
    ],
    ['header continuation line', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431],
    ['no Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400],
    [
      'a form body on an OPTIONS',
      'OPTIONS /oauth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b',
      405,
    ],
    [
      'a text body',
      'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi',
      400,
    ],
    [
      'an oversized body announced with Expect: 100-continue',
      `POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${FIVE_MIB}\r\nExpect: 100-continue\r\n\r\n`,
      413,
    ],
  ];

  for (const [name, text, status] of cases) {
    it(`answers ${name} with the envelope`, async () => {
      const answer = await rawExchange(svc.base, `${text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}`);
      expect(answer.status).toBe(status);
      expect(answer.headers).not.toContain('100 continue');
      expect(answer.body.error.code).toMatch(/^(input\.invalid|vendor:conclave:method_not_allowed)$/);
      expect(answer.body.error.message).toEqual(expect.any(String));
      expect(answer.body.error.request_id).toEqual(expect.any(String));
    });
  }

  it("gives Node's fetch the 413 envelope for a 5 MiB body, sized or streamed, every time", async () => {
    const body = 'x'.repeat(FIVE_MIB);
    for (let i = 0; i < 5; i++) {
      const sized = await fetch(`${svc.base}/api/rooms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(sized.status).toBe(413);
      expect(((await sized.json()) as any).error.code).toBe('input.invalid');
      const stream = new ReadableStream({
        start(controller) {
          for (let j = 0; j < 5; j++) controller.enqueue(new TextEncoder().encode(body.slice(0, 1024 * 1024)));
          controller.close();
        },
      });
      const streamed = await fetch(`${svc.base}/api/rooms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect(((await streamed.json()) as any).error.code).toBe('input.invalid');
    }
  });

  it('gives curl the 413 envelope, with and without Expect, sized and chunked', async () => {
    const file = path.join(tmpdir(), `conclave-5mib-${process.pid}.json`);
    await writeFile(file, 'x'.repeat(FIVE_MIB));
    for (const extra of [[], ['-H', 'Expect:'], ['-H', 'Transfer-Encoding: chunked']]) {
      const { stdout } = await exec('curl', [
        '-s',
        '-m',
        '10',
        '-w',
        '\n%{http_code}',
        '-H',
        'content-type: application/json',
        ...extra,
        '--data-binary',
        `@${file}`,
        `${svc.base}/api/rooms`,
      ]);
      const [text, status] = stdout.split('\n');
      expect(status).toBe('413');
      expect(JSON.parse(text!).error.code).toBe('input.invalid');
    }
  });

  it('keeps every credential out of the logs, wherever the client put it', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Secrets?', options: ['a', 'b'], config: { visibility: 'private' } },
    });
    const { slug, creator_token: token } = created.body;
    const password = 'correct horse battery staple 42';
    const secrets = [
      token,
      password,
      'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
      'it_invitecodeinvitecodeinvite',
    ];
    for (const [key, value] of [
      ['token', token],
      ['access_token', token],
      ['password', password],
      ['mandate', secrets[2]!],
      ['invite', secrets[3]!],
      ['t', token],
    ]) {
      const res = await call(svc.base, 'GET', `/api/rooms/${slug}/events?since=0&${key}=${encodeURIComponent(value!)}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    await call(svc.base, 'GET', `/api/rooms/${token}`);
    await call(svc.base, 'GET', `/api/rooms/${slug}`, { token, headers: { 'x-room-password': password } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { password, display_name: 'x' } });
    await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { headers: { 'x-mandate': secrets[2]! } });
    // The request lines were logged (at trace level everything is), with the secrets masked.
    const logs = svc.output();
    expect(logs).toContain(`/api/rooms/${slug}/events?since=0&token=[redacted]`);
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(encodeURIComponent(secret));
    }
  });
});
