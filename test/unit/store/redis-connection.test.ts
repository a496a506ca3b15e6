/** REDIS_URL as operators write it: one server, or the nodes of a Cluster. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { parseRedisUrl } from '../../../src/store/redis-connection.js';

describe('parseRedisUrl', () => {
  it('reads one server, with credentials, database and TLS', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({
      nodes: [{ host: '127.0.0.1', port: 6379 }],
      cluster: false,
      options: {},
    });
    expect(parseRedisUrl('rediss://app:s%3Acret@cache.internal/2')).toEqual({
      nodes: [{ host: 'cache.internal', port: 6379 }],
      cluster: false,
      options: { username: 'app', password: 's:cret', db: 2, tls: {} },
    });
    expect(parseRedisUrl('redis://127.0.0.1:6379', true).cluster).toBe(true);
  });

  it('reads several nodes, as URLs or host:port, as a Cluster', () => {
    expect(parseRedisUrl('redis://a:7000, b:7001,[::1]:7002')).toEqual({
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      cluster: true,
      options: {},
    });
  });

  it('refuses what is not Redis, and the configuration says so', () => {
    expect(() => parseRedisUrl('http://a:1')).toThrow('must use redis:// or rediss://');
    expect(() => parseRedisUrl(' , ')).toThrow('REDIS_URL is empty');
    expect(() => loadConfig({ STORE: 'redis', REDIS_URL: 'redis://a:1,http://b:2' })).toThrow(
      'REDIS_URL: (value hidden) an entry must use redis:// or rediss://',
    );
    expect(loadConfig({ STORE: 'redis', REDIS_URL: 'a:7000,b:7001' }).store).toMatchObject({ url: 'a:7000,b:7001' });
  });
});
