/**
 * The Redis store refuses a server older than Redis 7 at start, with a message an operator can act
 * on: the commit script announces commits with SPUBLISH (sharded pub/sub, docs/architecture.md,
 * Storage), which Redis 6 answers with an unknown-command error on every commit. The old server is a
 * loopback stand-in speaking enough RESP for a connection: it claims the version under test.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../../src/store/redis-store.js';

const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** Splits complete RESP command arrays off the front of `buffer`; returns them and what is left. */
function commandsIn(buffer: string): [string[][], string] {
  const commands: string[][] = [];
  let rest = buffer;
  for (;;) {
    const header = /^\*(\d+)\r\n/.exec(rest);
    if (!header) return [commands, rest];
    let at = header[0].length;
    const args: string[] = [];
    for (let i = 0; i < Number(header[1]); i++) {
      const size = /^\$(\d+)\r\n/.exec(rest.slice(at));
      if (!size || rest.length < at + size[0].length + Number(size[1]) + 2) return [commands, rest];
      at += size[0].length;
      args.push(rest.slice(at, at + Number(size[1])));
      at += Number(size[1]) + 2;
    }
    commands.push(args);
    rest = rest.slice(at);
  }
}

/** A server that answers INFO with `redis_version`, SUBSCRIBE with its confirmation, anything else +OK. */
async function fakeRedis(version: string): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    socket.on('data', (chunk) => {
      const [commands, rest] = commandsIn(buffer + chunk.toString('utf8'));
      buffer = rest;
      for (const [name = '', ...args] of commands) {
        seen.push(name.toUpperCase());
        if (name.toUpperCase() === 'INFO') {
          socket.write(bulk(`# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\nloading:0\r\n`));
        } else if (name.toUpperCase() === 'SUBSCRIBE') {
          for (const [i, channel] of args.entries())
            socket.write(`*3\r\n${bulk('subscribe')}${bulk(channel)}:${i + 1}\r\n`);
        } else {
          socket.write('+OK\r\n');
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the Redis version', () => {
  let server: Awaited<ReturnType<typeof fakeRedis>> | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('refuses Redis 6 at start, naming the version, what needs 7 and where to read', async () => {
    server = await fakeRedis('6.2.14');
    const opening = openRedisStore({ url: server.url, keyPrefix: 'old:' });
    await expect(opening).rejects.toThrow(
      /Redis 6 is too old: Conclave needs Redis 7 or later.*SPUBLISH.*operators\.md/,
    );
    expect(server.seen).toContain('INFO');
  });

  it('goes on past the check on Redis 7 (the same stand-in, claiming 7.0.15)', async () => {
    server = await fakeRedis('7.0.15');
    // Past the version check the store loads its scripts; the stand-in cannot run them, so opening
    // may still fail, but never with the version refusal.
    const opened = await openRedisStore({ url: server.url, keyPrefix: 'new:' }).then(
      async (store) => {
        await store.close();
        return null;
      },
      (error: Error) => error,
    );
    expect(opened?.message ?? '').not.toMatch(/too old/);
    expect(server.seen).toContain('INFO');
  });
});
