/**
 * Every error kind a Redis Cluster failover brings (src/store/redis-errors.ts) is the store being
 * unavailable: mapped to StoreUnavailableError by the store (redis-calls.ts, toStoreError), and
 * answered 503 with Retry-After by the HTTP layer even when it arrives unmapped — never 500. A
 * reply error that says the request itself is wrong stays a bug (500), and a conflict stays a conflict.
 */
import { ReplyError } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors/index.js';
import { describe, expect, it } from 'vitest';
import { toProtocolError } from '../../../src/http/errors.js';
import { StoreConflictError, StoreUnavailableError } from '../../../src/store/port.js';
import { toStoreError } from '../../../src/store/redis-calls.js';
import { isRedisUnavailable } from '../../../src/store/redis-errors.js';
import { CONFLICT_REPLY } from '../../../src/store/redis-scripts.js';

/** An error of a class ioredis (or redis-errors) raises, by the name it carries. */
function named(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

const reply = (message: string) => new ReplyError(message);

const FAILOVER: [string, Error][] = [
  ['MOVED', reply('MOVED 3999 127.0.0.1:7002')],
  ['ASK', reply('ASK 3999 127.0.0.1:7002')],
  ['TRYAGAIN', reply('TRYAGAIN Multiple keys request during rehashing of slot')],
  ['CLUSTERDOWN', reply('CLUSTERDOWN The cluster is down')],
  ['CLUSTERDOWN (slot unbound)', reply('CLUSTERDOWN Hash slot not served')],
  ['READONLY (a demoted master)', reply("READONLY You can't write against a read only replica.")],
  [
    'READONLY inside a script (Redis 7)',
    reply("READONLY You can't write against a read only replica. script: 4b5c, on @user_script:3."),
  ],
  [
    'CLUSTERDOWN inside a script (Redis 6)',
    reply(
      'ERR Error running script (call to f_4b5c): @user_script:3: @user_script: 3: -CLUSTERDOWN The cluster is down',
    ),
  ],
  ['MASTERDOWN', reply('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no')],
  ['LOADING', reply('LOADING Redis is loading the dataset in memory')],
  ['NOREPLICAS', reply('NOREPLICAS Not enough good replicas to write.')],
  ['UNBLOCKED', reply('UNBLOCKED The client is unblocked due to CLUSTER REDIRECT')],
  ['EXECABORT', reply('EXECABORT Transaction discarded because of previous errors.')],
  ['connection reset mid-script', new Error('Connection is closed.')],
  ['command aborted by a closed connection', named('AbortError', 'Command aborted due to connection close')],
  [
    'too many redirections',
    new Error('Too many Cluster redirections. Last error: ReplyError: MOVED 3999 127.0.0.1:7002'),
  ],
  ['cluster not ready', new Error("Cluster isn't ready and enableOfflineQueue options is false")],
  ['slots refresh failed on every node', named('ClusterAllFailedError', 'Failed to refresh slots cache.')],
  ['retries spent', new MaxRetriesPerRequestError(20)],
  ['command timeout', new Error('Command timed out')],
];

describe('Redis errors during a Cluster failover', () => {
  for (const [kind, error] of FAILOVER) {
    it(`${kind}: the store maps it to StoreUnavailableError, and it answers 503 with Retry-After`, () => {
      expect(toStoreError(error)).toBeInstanceOf(StoreUnavailableError);
      const mapped = toProtocolError(toStoreError(error));
      expect(mapped.status).toBe(503);
      expect(mapped.code).toBe('vendor:conclave:unavailable');
      // Unmapped, straight from ioredis to the HTTP layer: still 503, never 500.
      expect(isRedisUnavailable(error)).toBe(true);
      const raw = toProtocolError(error);
      expect(raw.status).toBe(503);
      expect(raw.toSpec().headers?.['retry-after']).toBe('1');
    });
  }

  it('finds the Redis error inside a wrapping error', () => {
    expect(toProtocolError(new Error('commit failed', { cause: reply('MOVED 1 127.0.0.1:7000') })).status).toBe(503);
  });

  it('keeps a conflict a conflict, and a reply that says the request is wrong a 500 (a bug to fix, not to retry)', () => {
    expect(toStoreError(reply(`${CONFLICT_REPLY} room moved on`))).toBeInstanceOf(StoreConflictError);
    const wrong = reply("ERR wrong number of arguments for 'hset' command");
    expect(toStoreError(wrong)).toBe(wrong);
    expect(isRedisUnavailable(wrong)).toBe(false);
    expect(toProtocolError(wrong).status).toBe(500);
    expect(toProtocolError(new Error('Connection refused by the webhook receiver')).status).toBe(500);
  });
});
