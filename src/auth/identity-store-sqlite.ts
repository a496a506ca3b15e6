/**
 * IdentityStore on SQLite. It opens the main store's database file through its own connection and
 * keeps to its own `identity_*` tables, so the room store's schema and migrations are untouched.
 */
import { secureDatabaseFiles } from '../store/file-modes.js';
import Database from 'better-sqlite3';
import {
  type DeviceGrant,
  type DeviceGrantStatus,
  GRANT_RETENTION_MS,
  type HostedKey,
  type IdentityStore,
  type Revocation,
} from './identity-store.js';

const BUSY_TIMEOUT_MS = 5000;

// Additive only: a later change adds tables or columns with their own IF NOT EXISTS / ALTER steps.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS identity_device_grants (
  device_code_hash TEXT PRIMARY KEY,
  user_code        TEXT NOT NULL UNIQUE,
  client_id        TEXT NOT NULL,
  actions          TEXT NOT NULL,
  resource         TEXT,
  agent_slug       TEXT,
  from_text        TEXT,
  created_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL,
  interval_seconds INTEGER NOT NULL,
  last_polled_at   INTEGER,
  status           TEXT NOT NULL,
  public_id        TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS identity_device_grants_expires_at ON identity_device_grants (expires_at);

CREATE TABLE IF NOT EXISTS identity_hosted_keys (
  key_hash    TEXT PRIMARY KEY,
  public_id   TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  actions     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  mandate_jti TEXT NOT NULL,
  revoked_at  INTEGER
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS identity_revocations (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  jti        TEXT NOT NULL UNIQUE,
  revoked_at TEXT NOT NULL,
  reason     TEXT
);
`;

interface GrantRow {
  device_code_hash: string;
  user_code: string;
  client_id: string;
  actions: string;
  resource: string | null;
  agent_slug: string | null;
  from_text: string | null;
  created_at: number;
  expires_at: number;
  interval_seconds: number;
  last_polled_at: number | null;
  status: DeviceGrantStatus;
  public_id: string | null;
}

export interface KeyRow {
  key_hash: string;
  public_id: string;
  client_id: string;
  actions: string;
  created_at: number;
  expires_at: number;
  mandate_jti: string;
  revoked_at: number | null;
}

export function openSqliteIdentityStore(file: string): IdentityStore {
  secureDatabaseFiles(file);
  const db = new Database(file);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteIdentityStore(db);
}

class SqliteIdentityStore implements IdentityStore {
  private readonly sql;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      purgeGrants: db.prepare<[number]>('DELETE FROM identity_device_grants WHERE expires_at < ?'),
      insertGrant: db.prepare(
        `INSERT OR IGNORE INTO identity_device_grants VALUES (@device_code_hash, @user_code, @client_id, @actions,
           @resource, @agent_slug, @from_text, @created_at, @expires_at, @interval_seconds, @last_polled_at, @status, @public_id)`,
      ),
      grant: db.prepare<[string], GrantRow>('SELECT * FROM identity_device_grants WHERE device_code_hash = ?'),
      grantByUserCode: db.prepare<[string], GrantRow>('SELECT * FROM identity_device_grants WHERE user_code = ?'),
      notePoll: db.prepare<[number, number, string]>(
        'UPDATE identity_device_grants SET last_polled_at = ?, interval_seconds = ? WHERE device_code_hash = ?',
      ),
      decide: db.prepare<[string, string | null, string]>(
        `UPDATE identity_device_grants SET status = ?, public_id = ? WHERE device_code_hash = ? AND status = 'pending'`,
      ),
      redeem: db.prepare<[string]>(
        `UPDATE identity_device_grants SET status = 'redeemed' WHERE device_code_hash = ? AND status = 'approved'`,
      ),
      insertKey: db.prepare(
        `INSERT INTO identity_hosted_keys VALUES (@key_hash, @public_id, @client_id, @actions, @created_at,
           @expires_at, @mandate_jti, @revoked_at)`,
      ),
      key: db.prepare<[string], KeyRow>('SELECT * FROM identity_hosted_keys WHERE key_hash = ?'),
      revokeKey: db.prepare<[number, string]>(
        'UPDATE identity_hosted_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL',
      ),
      insertRevocation: db.prepare<[string, string, string | null]>(
        'INSERT OR IGNORE INTO identity_revocations (jti, revoked_at, reason) VALUES (?, ?, ?)',
      ),
      isRevoked: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM identity_revocations WHERE jti = ?'),
      revocations: db.prepare<[], { jti: string; revoked_at: string; reason: string | null }>(
        'SELECT jti, revoked_at, reason FROM identity_revocations ORDER BY seq',
      ),
    };
  }

  async createDeviceGrant(grant: DeviceGrant, now: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        this.sql.purgeGrants.run(now - GRANT_RETENTION_MS);
        return this.sql.insertGrant.run(grantRow(grant)).changes === 1;
      })
      .immediate();
  }

  async deviceGrant(deviceCodeHash: string): Promise<DeviceGrant | null> {
    return fromGrantRow(this.sql.grant.get(deviceCodeHash));
  }

  async deviceGrantByUserCode(userCode: string): Promise<DeviceGrant | null> {
    return fromGrantRow(this.sql.grantByUserCode.get(userCode));
  }

  async notePoll(deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void> {
    this.sql.notePoll.run(now, intervalSeconds, deviceCodeHash);
  }

  async decideDeviceGrant(
    deviceCodeHash: string,
    decision: 'approved' | 'denied',
    publicId: string | null,
  ): Promise<DeviceGrant | null> {
    const changed = this.sql.decide.run(decision, publicId, deviceCodeHash).changes === 1;
    return changed ? fromGrantRow(this.sql.grant.get(deviceCodeHash)) : null;
  }

  async redeemDeviceGrant(deviceCodeHash: string, key: HostedKey): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.sql.redeem.run(deviceCodeHash).changes !== 1) return false;
        this.sql.insertKey.run({ ...keyRow(key) });
        return true;
      })
      .immediate();
  }

  async hostedKey(keyHash: string): Promise<HostedKey | null> {
    const row = this.sql.key.get(keyHash);
    return row ? fromKeyRow(row) : null;
  }

  async revokeHostedKey(keyHash: string, revocation: Revocation, now: number): Promise<void> {
    this.db
      .transaction(() => {
        if (this.sql.revokeKey.run(now, keyHash).changes !== 1) return;
        this.sql.insertRevocation.run(revocation.jti, revocation.revoked_at, revocation.reason ?? null);
      })
      .immediate();
  }

  async revocations(): Promise<Revocation[]> {
    return this.sql.revocations.all().map((row) => ({
      jti: row.jti,
      revoked_at: row.revoked_at,
      ...(row.reason !== null ? { reason: row.reason } : {}),
    }));
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.sql.isRevoked.get(jti) !== undefined;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function grantRow(grant: DeviceGrant): GrantRow {
  return {
    device_code_hash: grant.deviceCodeHash,
    user_code: grant.userCode,
    client_id: grant.clientId,
    actions: JSON.stringify(grant.actions),
    resource: grant.resource,
    agent_slug: grant.agentSlug,
    from_text: grant.from,
    created_at: grant.createdAt,
    expires_at: grant.expiresAt,
    interval_seconds: grant.intervalSeconds,
    last_polled_at: grant.lastPolledAt,
    status: grant.status,
    public_id: grant.publicId,
  };
}

function fromGrantRow(row: GrantRow | undefined): DeviceGrant | null {
  if (!row) return null;
  return {
    deviceCodeHash: row.device_code_hash,
    userCode: row.user_code,
    clientId: row.client_id,
    actions: JSON.parse(row.actions) as string[],
    resource: row.resource,
    agentSlug: row.agent_slug,
    from: row.from_text,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    intervalSeconds: row.interval_seconds,
    lastPolledAt: row.last_polled_at,
    status: row.status,
    publicId: row.public_id,
  };
}

function keyRow(key: HostedKey): KeyRow {
  return {
    key_hash: key.keyHash,
    public_id: key.publicId,
    client_id: key.clientId,
    actions: JSON.stringify(key.actions),
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    mandate_jti: key.mandateJti,
    revoked_at: key.revokedAt,
  };
}

export function fromKeyRow(row: KeyRow): HostedKey {
  return {
    keyHash: row.key_hash,
    publicId: row.public_id,
    clientId: row.client_id,
    actions: JSON.parse(row.actions) as string[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    mandateJti: row.mandate_jti,
    revokedAt: row.revoked_at,
  };
}
