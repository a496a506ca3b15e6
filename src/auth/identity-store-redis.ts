/**
 * IdentityStore on Redis. Keys live under `<prefix>identity:{identity}:`; the single hash tag keeps
 * the multi-key scripts (redeem, revoke) on one Cluster slot. Grants and keys are hashes whose
 * absent fields mean null; every state change is one Lua script, so it cannot race another process.
 */
import type { Redis } from 'ioredis';
import {
  type DeviceGrant,
  type DeviceGrantStatus,
  GRANT_RETENTION_MS,
  type HostedKey,
  type IdentityStore,
  type Revocation,
} from './identity-store.js';

// The user-code key holds "<device code hash> <expires_at>", so a long-expired holder can be replaced
// by the service clock's judgement (ARGV[3] = oldest live expires_at), not only by Redis expiry.
const CREATE_SCRIPT = `
local holder = redis.call('GET', KEYS[2])
if holder and tonumber(string.match(holder, ' (%d+)$')) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

const DECIDE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'public_id', ARGV[2]) end
return 1
`;

const REDEEM_SCRIPT = `
if redis.call('HGET', KEYS[1], 'status') ~= 'approved' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'redeemed')
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
`;

const REVOKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'revoked_at') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'revoked_at', ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return 1
`;

interface IdentityScripts {
  conclaveIdentityCreate(
    grant: string,
    user: string,
    holder: string,
    ttl: number,
    oldestLive: number,
    ...fields: string[]
  ): Promise<number>;
  conclaveIdentityDecide(grant: string, status: string, publicId: string): Promise<number>;
  conclaveIdentityRedeem(grant: string, key: string, ttl: number, ...fields: string[]): Promise<number>;
  conclaveIdentityRevoke(
    key: string,
    list: string,
    set: string,
    revokedAt: string,
    entry: string,
    jti: string,
  ): Promise<number>;
}

/** Hosted keys are kept a day past expiry, like grants, so a late presenter is told "expired" by the caller. */
const KEY_RETENTION_MS = GRANT_RETENTION_MS;

export class RedisIdentityStore implements IdentityStore {
  private readonly redis: Redis & IdentityScripts;
  private readonly base: string;

  /** The connection is shared with other users and is not closed here. */
  constructor(redis: Redis, prefix: string) {
    redis.defineCommand('conclaveIdentityCreate', { numberOfKeys: 2, lua: CREATE_SCRIPT });
    redis.defineCommand('conclaveIdentityDecide', { numberOfKeys: 1, lua: DECIDE_SCRIPT });
    redis.defineCommand('conclaveIdentityRedeem', { numberOfKeys: 2, lua: REDEEM_SCRIPT });
    redis.defineCommand('conclaveIdentityRevoke', { numberOfKeys: 3, lua: REVOKE_SCRIPT });
    this.redis = redis as Redis & IdentityScripts;
    this.base = `${prefix}identity:{identity}:`;
  }

  private grantKey(hash: string) {
    return `${this.base}grant:${hash}`;
  }
  private userKey(code: string) {
    return `${this.base}user:${code}`;
  }
  private hostedKeyKey(hash: string) {
    return `${this.base}key:${hash}`;
  }
  private get revocationsKey() {
    return `${this.base}revocations`;
  }
  private get revokedJtisKey() {
    return `${this.base}revoked-jtis`;
  }

  async createDeviceGrant(grant: DeviceGrant, now: number): Promise<boolean> {
    const ttl = Math.max(1, grant.expiresAt + GRANT_RETENTION_MS - now);
    const created = await this.redis.conclaveIdentityCreate(
      this.grantKey(grant.deviceCodeHash),
      this.userKey(grant.userCode),
      `${grant.deviceCodeHash} ${grant.expiresAt}`,
      ttl,
      now - GRANT_RETENTION_MS,
      ...flatten(grantFields(grant)),
    );
    return created === 1;
  }

  async deviceGrant(deviceCodeHash: string): Promise<DeviceGrant | null> {
    return fromGrantFields(deviceCodeHash, await this.redis.hgetall(this.grantKey(deviceCodeHash)));
  }

  async deviceGrantByUserCode(userCode: string): Promise<DeviceGrant | null> {
    const holder = await this.redis.get(this.userKey(userCode));
    return holder === null ? null : this.deviceGrant(holder.split(' ')[0]!);
  }

  async notePoll(deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void> {
    const key = this.grantKey(deviceCodeHash);
    // HSET on a vanished grant would recreate it without an expiry.
    if ((await this.redis.exists(key)) === 1) {
      await this.redis.hset(key, 'last_polled_at', String(now), 'interval_seconds', String(intervalSeconds));
    }
  }

  async decideDeviceGrant(
    deviceCodeHash: string,
    decision: 'approved' | 'denied',
    publicId: string | null,
  ): Promise<DeviceGrant | null> {
    const changed = await this.redis.conclaveIdentityDecide(this.grantKey(deviceCodeHash), decision, publicId ?? '');
    return changed === 1 ? this.deviceGrant(deviceCodeHash) : null;
  }

  async redeemDeviceGrant(deviceCodeHash: string, key: HostedKey): Promise<boolean> {
    const ttl = Math.max(1, key.expiresAt + KEY_RETENTION_MS - key.createdAt);
    const redeemed = await this.redis.conclaveIdentityRedeem(
      this.grantKey(deviceCodeHash),
      this.hostedKeyKey(key.keyHash),
      ttl,
      ...flatten(keyFields(key)),
    );
    return redeemed === 1;
  }

  async hostedKey(keyHash: string): Promise<HostedKey | null> {
    return fromKeyFields(keyHash, await this.redis.hgetall(this.hostedKeyKey(keyHash)));
  }

  async revokeHostedKey(keyHash: string, revocation: Revocation, now: number): Promise<void> {
    await this.redis.conclaveIdentityRevoke(
      this.hostedKeyKey(keyHash),
      this.revocationsKey,
      this.revokedJtisKey,
      String(now),
      JSON.stringify(revocation),
      revocation.jti,
    );
  }

  async revocations(): Promise<Revocation[]> {
    const entries = await this.redis.lrange(this.revocationsKey, 0, -1);
    return entries.map((entry) => JSON.parse(entry) as Revocation);
  }

  async isRevoked(jti: string): Promise<boolean> {
    return (await this.redis.sismember(this.revokedJtisKey, jti)) === 1;
  }

  /**
   * Writes a hosted key as another store held it (`conclave migrate`), with the expiry it would have
   * had; nothing existing is overwritten. `gone` for a key already past its retention.
   */
  async importHostedKey(key: HostedKey, now: number): Promise<'created' | 'same' | 'different' | 'gone'> {
    const ttl = key.expiresAt + KEY_RETENTION_MS - now;
    if (ttl <= 0) return 'gone';
    const held = await this.hostedKey(key.keyHash);
    if (held) return JSON.stringify(held) === JSON.stringify(key) ? 'same' : 'different';
    const target = this.hostedKeyKey(key.keyHash);
    await this.redis
      .multi()
      .hset(target, ...flatten(keyFields(key)))
      .pexpire(target, ttl)
      .exec();
    return 'created';
  }

  /** Appends a revocation unless its jti is already revoked here; called in the source's order. */
  async importRevocation(revocation: Revocation): Promise<boolean> {
    if (await this.isRevoked(revocation.jti)) return false;
    await this.redis
      .multi()
      .rpush(this.revocationsKey, JSON.stringify(revocation))
      .sadd(this.revokedJtisKey, revocation.jti)
      .exec();
    return true;
  }

  async close(): Promise<void> {}
}

type Fields = Record<string, string | null>;

function flatten(fields: Fields): string[] {
  return Object.entries(fields).flatMap(([name, value]) => (value === null ? [] : [name, value]));
}

function grantFields(grant: DeviceGrant): Fields {
  return {
    user_code: grant.userCode,
    client_id: grant.clientId,
    actions: JSON.stringify(grant.actions),
    resource: grant.resource,
    agent_slug: grant.agentSlug,
    from: grant.from,
    created_at: String(grant.createdAt),
    expires_at: String(grant.expiresAt),
    interval_seconds: String(grant.intervalSeconds),
    last_polled_at: grant.lastPolledAt === null ? null : String(grant.lastPolledAt),
    status: grant.status,
    public_id: grant.publicId,
  };
}

function fromGrantFields(deviceCodeHash: string, f: Record<string, string>): DeviceGrant | null {
  if (f.status === undefined) return null;
  return {
    deviceCodeHash,
    userCode: f.user_code!,
    clientId: f.client_id!,
    actions: JSON.parse(f.actions!) as string[],
    resource: f.resource ?? null,
    agentSlug: f.agent_slug ?? null,
    from: f.from ?? null,
    createdAt: Number(f.created_at),
    expiresAt: Number(f.expires_at),
    intervalSeconds: Number(f.interval_seconds),
    lastPolledAt: f.last_polled_at === undefined ? null : Number(f.last_polled_at),
    status: f.status as DeviceGrantStatus,
    publicId: f.public_id ?? null,
  };
}

function keyFields(key: HostedKey): Fields {
  return {
    public_id: key.publicId,
    client_id: key.clientId,
    actions: JSON.stringify(key.actions),
    created_at: String(key.createdAt),
    expires_at: String(key.expiresAt),
    mandate_jti: key.mandateJti,
    revoked_at: key.revokedAt === null ? null : String(key.revokedAt),
  };
}

function fromKeyFields(keyHash: string, f: Record<string, string>): HostedKey | null {
  if (f.public_id === undefined) return null;
  return {
    keyHash,
    publicId: f.public_id,
    clientId: f.client_id!,
    actions: JSON.parse(f.actions!) as string[],
    createdAt: Number(f.created_at),
    expiresAt: Number(f.expires_at),
    mandateJti: f.mandate_jti!,
    revokedAt: f.revoked_at === undefined ? null : Number(f.revoked_at),
  };
}
