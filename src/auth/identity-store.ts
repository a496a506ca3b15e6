/**
 * Durable state of the device flow and hosted keys (docs/concepts.md, Mandates): device grants, hosted keys (hashed) and
 * the service's own mandate revocations. One interface, three adapters: in memory (unit tests),
 * SQLite (identity-store-sqlite.ts) and Redis (identity-store-redis.ts). Secrets arrive hashed.
 */

export type DeviceGrantStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

export interface DeviceGrant {
  /** SHA-256 hex of the device code. */
  deviceCodeHash: string;
  /** Eight characters, upper case, no hyphen. */
  userCode: string;
  clientId: string;
  actions: string[];
  resource: string | null;
  agentSlug: string | null;
  from: string | null;
  /** Epoch ms. */
  createdAt: number;
  expiresAt: number;
  intervalSeconds: number;
  lastPolledAt: number | null;
  status: DeviceGrantStatus;
  /** Set at approval: the account id the hosted key will carry. */
  publicId: string | null;
}

export interface HostedKey {
  /** SHA-256 hex of the `rk_…` key. */
  keyHash: string;
  publicId: string;
  clientId: string;
  actions: string[];
  createdAt: number;
  expiresAt: number;
  mandateJti: string;
  revokedAt: number | null;
}

/** An entry of the discovery document's `revocations` (docs/concepts.md, Mandates). */
export interface Revocation {
  jti: string;
  revoked_at: string;
  reason?: string;
}

export interface IdentityStore {
  /** Stores a new grant; false when a grant already holds its user code (draw another one). */
  createDeviceGrant(grant: DeviceGrant, now: number): Promise<boolean>;
  deviceGrant(deviceCodeHash: string): Promise<DeviceGrant | null>;
  deviceGrantByUserCode(userCode: string): Promise<DeviceGrant | null>;
  notePoll(deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void>;
  /** pending → approved | denied. Returns the decided grant, or null when it was no longer pending. */
  decideDeviceGrant(
    deviceCodeHash: string,
    decision: 'approved' | 'denied',
    publicId: string | null,
  ): Promise<DeviceGrant | null>;
  /** approved → redeemed, storing the hosted key in the same step; false when not approved (used up). */
  redeemDeviceGrant(deviceCodeHash: string, key: HostedKey): Promise<boolean>;
  hostedKey(keyHash: string): Promise<HostedKey | null>;
  /** Marks the key revoked and appends the revocation, once; unknown or revoked keys are left alone. */
  revokeHostedKey(keyHash: string, revocation: Revocation, now: number): Promise<void>;
  /** Oldest first. */
  revocations(): Promise<Revocation[]>;
  isRevoked(jti: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Grants stay readable this long after expiry, so a late poll hears `expired_token`, not `invalid_grant`. */
export const GRANT_RETENTION_MS = 24 * 60 * 60_000;

export class MemoryIdentityStore implements IdentityStore {
  private readonly grants = new Map<string, DeviceGrant>();
  private readonly keys = new Map<string, HostedKey>();
  private readonly revoked: Revocation[] = [];

  async createDeviceGrant(grant: DeviceGrant, now: number): Promise<boolean> {
    for (const [hash, existing] of this.grants) {
      if (existing.expiresAt + GRANT_RETENTION_MS < now) this.grants.delete(hash);
    }
    if ([...this.grants.values()].some((g) => g.userCode === grant.userCode)) return false;
    this.grants.set(grant.deviceCodeHash, { ...grant });
    return true;
  }

  async deviceGrant(deviceCodeHash: string): Promise<DeviceGrant | null> {
    const grant = this.grants.get(deviceCodeHash);
    return grant ? { ...grant } : null;
  }

  async deviceGrantByUserCode(userCode: string): Promise<DeviceGrant | null> {
    const grant = [...this.grants.values()].find((g) => g.userCode === userCode);
    return grant ? { ...grant } : null;
  }

  async notePoll(deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void> {
    const grant = this.grants.get(deviceCodeHash);
    if (grant) Object.assign(grant, { lastPolledAt: now, intervalSeconds });
  }

  async decideDeviceGrant(
    deviceCodeHash: string,
    decision: 'approved' | 'denied',
    publicId: string | null,
  ): Promise<DeviceGrant | null> {
    const grant = this.grants.get(deviceCodeHash);
    if (grant?.status !== 'pending') return null;
    Object.assign(grant, { status: decision, publicId });
    return { ...grant };
  }

  async redeemDeviceGrant(deviceCodeHash: string, key: HostedKey): Promise<boolean> {
    const grant = this.grants.get(deviceCodeHash);
    if (grant?.status !== 'approved') return false;
    grant.status = 'redeemed';
    this.keys.set(key.keyHash, { ...key });
    return true;
  }

  async hostedKey(keyHash: string): Promise<HostedKey | null> {
    const key = this.keys.get(keyHash);
    return key ? { ...key } : null;
  }

  async revokeHostedKey(keyHash: string, revocation: Revocation, now: number): Promise<void> {
    const key = this.keys.get(keyHash);
    if (!key || key.revokedAt !== null) return;
    key.revokedAt = now;
    this.revoked.push({ ...revocation });
  }

  async revocations(): Promise<Revocation[]> {
    return this.revoked.map((r) => ({ ...r }));
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.revoked.some((r) => r.jti === jti);
  }

  async close(): Promise<void> {}
}
