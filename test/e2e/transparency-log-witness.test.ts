/**
 * Witness cosigning in the C2SP tlog-witness shape, against a witness written here from the spec:
 * it checks the log's signature and the consistency proof from the size it last cosigned (409 with
 * its size when the log names another), and answers a tlog-cosignature/v1 line. The service stores
 * the line and serves it with the checkpoint; the client verifies it with the witness key.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint, verifyConsistency, verifyCosignature } from '../../src/client/tlog.js';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { cosignedMessage, formatSignatureLine, parseNote, verifierKeyString } from '../../src/tlog/note.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';

const WITNESS_NAME = 'witness.test/w1';
const seed = Buffer.alloc(32, 0x42);
const privateKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = Buffer.from((privateKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url');
const witnessKey = verifierKeyString(WITNESS_NAME, publicKey, 0x04);
const keyId = createHash('sha256')
  .update(Buffer.concat([Buffer.from(`${WITNESS_NAME}\n`), Buffer.from([0x04]), publicKey]))
  .digest()
  .subarray(0, 4);

/** The witness: one log, the latest size and root it cosigned, every request it saw. */
function startWitness(logKey: () => string): Promise<{ server: Server; url: string; requests: string[] }> {
  const state = { size: 0, root: '' };
  const requests: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', async () => {
      requests.push(body);
      if (request.method !== 'POST' || request.url !== '/add-checkpoint') return response.writeHead(404).end();
      const [head, rest] = [body.slice(0, body.indexOf('\n\n')), body.slice(body.indexOf('\n\n') + 2)];
      const [oldLine, ...proof] = head.split('\n');
      const old = Number(oldLine?.replace('old ', ''));
      let checkpoint: Awaited<ReturnType<typeof verifyCheckpoint>>;
      try {
        checkpoint = await verifyCheckpoint(rest, logKey());
      } catch {
        return response.writeHead(403).end();
      }
      if (old !== state.size)
        return response.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end(`${state.size}\n`);
      if (state.size > 0 && !verifyConsistency({ size: state.size, root: state.root }, checkpoint, proof)) {
        return response.writeHead(422).end();
      }
      state.size = checkpoint.size;
      state.root = checkpoint.root;
      const timestamp = 1_800_000_000n;
      const signature = sign(null, cosignedMessage(parseNote(rest).text, timestamp), privateKey);
      const time = Buffer.alloc(8);
      time.writeBigUInt64BE(timestamp);
      response.writeHead(200).end(formatSignatureLine(WITNESS_NAME, keyId, Buffer.concat([time, signature])));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, requests }),
    ),
  );
}

describe('witness cosignatures', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let witness: Awaited<ReturnType<typeof startWitness>>;
  let logKey = '';

  beforeAll(async () => {
    witness = await startWitness(() => logKey);
    svc = await startService({ clock, env: { LOG_WITNESSES: `${witness.url} ${witnessKey}` } });
    logKey = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log.verifier_key;
  });
  afterAll(async () => {
    await svc.stop();
    witness.server.close();
  });

  it('offers each checkpoint, stores the witness line and serves it with the checkpoint', async () => {
    const discovery = (await call(svc.base, 'GET', '/.well-known/svc.json')).body;
    expect(discovery.audit_log.witnesses).toEqual([witnessKey]);
    for (let round = 1; round <= 2; round++) {
      await roomWithReceipts(svc.base, clock);
      await svc.service.integrator.integrateNow();
      await svc.service.integrator.witnessing;
      const served = (await call(svc.base, 'GET', '/log/checkpoint')).text;
      const checkpoint = await verifyCheckpoint(served, logKey);
      expect(checkpoint.size).toBe(round);
      expect(await verifyCosignature(served, witnessKey)).toBe(true);
      const bySize = await call(svc.base, 'GET', `/log/checkpoint/${round}`);
      expect(await verifyCosignature(bySize.text, witnessKey)).toBe(true);
      expect(bySize.headers.get('cache-control')).toBe('public, max-age=60');
    }
    // The second offer carried a consistency proof from the size the witness held.
    const last = witness.requests.at(-1) as string;
    expect(last.startsWith('old 1\n')).toBe(true);
    // A tampered line does not verify.
    const served = (await call(svc.base, 'GET', '/log/checkpoint')).text;
    expect(await verifyCosignature(served.replace(/\n\n/, '\n\nx'), witnessKey)).toBe(false);
  });

  it('refuses a malformed LOG_WITNESSES at start-up', () => {
    expect(() => loadConfig({ LOG_WITNESSES: 'not-a-url key' })).toThrow(/LOG_WITNESSES/);
    const logStyleKey = verifierKeyString('w', publicKey, 0x01);
    expect(() => loadConfig({ LOG_WITNESSES: `https://w.example/ ${logStyleKey}` })).toThrow(/type 0x04/);
  });
});
