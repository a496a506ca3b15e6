/**
 * The device authorization flow and hosted keys (docs/concepts.md, Mandates, RFC 8628): an agent asks for a hosted
 * identity, the operator approves it with the admin token, the agent's poll then receives a hosted
 * key (`rk_…`, stored hashed) and a mandate signed by the service. Transport-free: the routes in
 * http/oauth-routes.ts only read parameters and map the errors.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { shownTextProblem } from '../domain/shown-text.js';
import { invalidInput } from '../errors.js';
import { type Keyring, MANDATE_TYP, signCompact } from '../receipts/index.js';
import type { DeviceGrant, HostedKey, IdentityStore, Revocation } from './identity-store.js';
import { MANDATE_ACTIONS, type MandateAction } from './mandate-claims.js';
import { hashSecret, randomToken, sameHash } from './secrets.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const SCOPES: readonly string[] = MANDATE_ACTIONS.map((action) => `svc:${action}`);

const DEVICE_CODE_TTL_SECONDS = 600;
const POLL_INTERVAL_SECONDS = 5;
const SLOW_DOWN_STEP_SECONDS = 5;
const HOSTED_KEY_TTL_SECONDS = 30 * 24 * 3600;
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const MAX_FROM_LENGTH = 500;

/** A flat OAuth error (RFC 6749 §5.2), not the REST envelope. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export type OAuthParams = Record<string, unknown>;

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  resource: string | null;
  mandate: string;
  public_id: string;
}

/** What a valid hosted key tells the caller resolver (account identity, docs/concepts.md, Mandates). */
export interface HostedKeyIdentity {
  publicId: string;
  mandateJti: string;
  actions: string[];
  expiresAt: number;
}

export interface DeviceFlowOptions {
  store: IdentityStore;
  keyring: Keyring;
  /** Epoch ms. */
  now: () => number;
  baseUrl: () => string;
  /** SHA-256 hex of the admin token; null disables approval and so the whole flow. */
  adminTokenHash: string | null;
}

export class DeviceFlow {
  constructor(private readonly options: DeviceFlowOptions) {}

  /** Approval is an operator act: without an admin token no grant could ever be approved. */
  get enabled(): boolean {
    return this.options.adminTokenHash !== null;
  }

  isAdminToken(bearer: string | undefined): boolean {
    const { adminTokenHash } = this.options;
    return bearer !== undefined && adminTokenHash !== null && sameHash(hashSecret(bearer), adminTokenHash);
  }

  async authorize(params: OAuthParams): Promise<DeviceAuthorizationResponse> {
    this.requireEnabled();
    const base = this.options.baseUrl();
    const clientId = requiredString(params, 'client_id', 100);
    const actions = actionsOfScope(optionalString(params, 'scope', 2000));
    const resource = optionalString(params, 'resource', 2048);
    if (resource !== null && resource.replace(/\/$/, '') !== base) {
      throw new OAuthError('invalid_target', `resource must be ${base}, the only resource this service protects.`);
    }
    const agentSlug = optionalString(params, 'agent_slug', 100);
    const from = optionalString(params, 'from', MAX_FROM_LENGTH);

    const now = this.options.now();
    const deviceCode = randomToken('dc_');
    for (;;) {
      const userCode = newUserCode();
      const created = await this.options.store.createDeviceGrant(
        {
          deviceCodeHash: hashSecret(deviceCode),
          userCode,
          clientId,
          actions,
          resource: resource === null ? null : base,
          agentSlug,
          from,
          createdAt: now,
          expiresAt: now + DEVICE_CODE_TTL_SECONDS * 1000,
          intervalSeconds: POLL_INTERVAL_SECONDS,
          lastPolledAt: null,
          status: 'pending',
          publicId: null,
        },
        now,
      );
      if (!created) continue;
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: `${base}/oauth/device`,
        verification_uri_complete: `${base}/oauth/device?user_code=${shown}`,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: POLL_INTERVAL_SECONDS,
      };
    }
  }

  async token(params: OAuthParams): Promise<TokenResponse> {
    this.requireEnabled();
    const grantType = requiredString(params, 'grant_type', 200);
    if (grantType !== DEVICE_CODE_GRANT) {
      throw new OAuthError('unsupported_grant_type', `Only grant_type ${DEVICE_CODE_GRANT} is supported.`);
    }
    const deviceCode = requiredString(params, 'device_code', 200);
    const clientId = optionalString(params, 'client_id', 100);
    const { store } = this.options;
    const grant = await store.deviceGrant(hashSecret(deviceCode));
    if (!grant || grant.status === 'redeemed' || (clientId !== null && clientId !== grant.clientId)) {
      throw new OAuthError(
        'invalid_grant',
        'The device_code is unknown, was issued to another client, or was already used.',
      );
    }
    const now = this.options.now();
    if (now >= grant.expiresAt) {
      throw new OAuthError('expired_token', 'The device_code has expired; start again at /oauth/device_authorization.');
    }
    if (grant.lastPolledAt !== null && now - grant.lastPolledAt < grant.intervalSeconds * 1000) {
      const interval = grant.intervalSeconds + SLOW_DOWN_STEP_SECONDS;
      await store.notePoll(grant.deviceCodeHash, now, interval);
      throw new OAuthError('slow_down', `Polling too fast: wait at least ${interval} s between polls.`);
    }
    await store.notePoll(grant.deviceCodeHash, now, grant.intervalSeconds);
    if (grant.status === 'denied') throw new OAuthError('access_denied', 'The operator denied this request.');
    if (grant.status === 'pending') {
      throw new OAuthError('authorization_pending', 'The operator has not approved this request yet; keep polling.');
    }
    return this.issue(grant, now);
  }

  private async issue(grant: DeviceGrant, now: number): Promise<TokenResponse> {
    const base = this.options.baseUrl();
    const publicId = grant.publicId!;
    const iat = Math.floor(now / 1000);
    const jti = `urn:uuid:${randomUUID()}`;
    const signing = this.options.keyring.current;
    const mandate = signCompact(
      { alg: 'EdDSA', kid: signing.kid, typ: MANDATE_TYP },
      {
        iss: base,
        sub: `urn:svc:agent:${publicId}`,
        jti,
        iat,
        nbf: iat,
        exp: iat + HOSTED_KEY_TTL_SECONDS,
        svc: {
          rooms: ['*'],
          actions: grant.actions,
          weight_cap: 9,
          rate_caps: { limit: 100, window_seconds: 3600 },
          trust_stage: 2,
        },
      },
      signing,
    );
    const accessToken = randomToken('rk_');
    const key: HostedKey = {
      keyHash: hashSecret(accessToken),
      publicId,
      clientId: grant.clientId,
      actions: grant.actions,
      createdAt: now,
      expiresAt: now + HOSTED_KEY_TTL_SECONDS * 1000,
      mandateJti: jti,
      revokedAt: null,
    };
    if (!(await this.options.store.redeemDeviceGrant(grant.deviceCodeHash, key))) {
      throw new OAuthError('invalid_grant', 'The device_code was already used.');
    }
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: HOSTED_KEY_TTL_SECONDS,
      scope: grant.actions.map((action) => `svc:${action}`).join(' '),
      resource: grant.resource,
      mandate,
      public_id: publicId,
    };
  }

  /** The pending request behind a user code, for the approval page; null when unknown, decided or expired. */
  async pendingRequest(userCode: string): Promise<DeviceGrant | null> {
    const normalized = normalizeUserCode(userCode);
    if (normalized === null) return null;
    const grant = await this.options.store.deviceGrantByUserCode(normalized);
    return grant?.status === 'pending' && this.options.now() < grant.expiresAt ? grant : null;
  }

  /** The operator's decision (docs/concepts.md, Mandates); the caller has checked the admin token. Errors are envelopes. */
  async decide(userCode: unknown, approve: boolean): Promise<{ user_code: string; status: 'approved' | 'denied' }> {
    const normalized = typeof userCode === 'string' ? normalizeUserCode(userCode) : null;
    if (normalized === null) {
      throw invalidInput('user_code', 'user_code must be the code shown to the agent, e.g. "BCDF-GHJK".', 'wrong_type');
    }
    const wanted = approve ? 'approved' : 'denied';
    const shown = formatUserCode(normalized);
    const grant = await this.options.store.deviceGrantByUserCode(normalized);
    if (!grant || this.options.now() >= grant.expiresAt) {
      throw invalidInput('user_code', `No pending device request has the user code ${shown}, or it has expired.`);
    }
    if (grant.status === 'pending') {
      const publicId = approve ? newPublicId() : null;
      const decided = await this.options.store.decideDeviceGrant(grant.deviceCodeHash, wanted, publicId);
      if (decided) return { user_code: shown, status: wanted };
    }
    // Repeating the same decision (a double click, a retry) answers the same; changing it is refused.
    const current = await this.options.store.deviceGrantByUserCode(normalized);
    const settled = current?.status === 'redeemed' ? 'approved' : current?.status;
    if (settled === wanted) return { user_code: shown, status: wanted };
    throw invalidInput('user_code', `The device request ${shown} was already ${settled}; it cannot be changed.`);
  }

  /**
   * RFC 7009 revocation of a hosted key by the admin token or by the key itself. Appends the key's
   * mandate jti to the service's revocations. Unknown tokens succeed silently.
   */
  async revoke(params: OAuthParams, bearer: string | undefined): Promise<void> {
    const token = requiredString(params, 'token', 1000);
    if (!this.isAdminToken(bearer) && bearer !== token) {
      throw new OAuthError(
        'invalid_client',
        'Authenticate the revocation with Authorization: Bearer <admin token> or with the hosted key being revoked.',
        401,
      );
    }
    const keyHash = hashSecret(token);
    const key = await this.options.store.hostedKey(keyHash);
    if (!key) return;
    const now = this.options.now();
    const revocation: Revocation = {
      jti: key.mandateJti,
      revoked_at: new Date(now).toISOString(),
      reason: 'key revoked',
    };
    await this.options.store.revokeHostedKey(keyHash, revocation, now);
  }

  /** A hosted key presented as a bearer: its identity, or null when unknown, expired or revoked. */
  async hostedKey(bearer: string): Promise<HostedKeyIdentity | null> {
    if (!bearer.startsWith('rk_')) return null;
    const key = await this.options.store.hostedKey(hashSecret(bearer));
    if (!key || key.revokedAt !== null || this.options.now() >= key.expiresAt) return null;
    return { publicId: key.publicId, mandateJti: key.mandateJti, actions: key.actions, expiresAt: key.expiresAt };
  }

  revocations(): Promise<Revocation[]> {
    return this.options.store.revocations();
  }

  private requireEnabled(): void {
    if (!this.enabled) {
      throw new OAuthError(
        'invalid_request',
        'Device authorization is unavailable on this deployment: approving a request needs an admin token (CONCLAVE_ADMIN_TOKEN), and none is configured.',
        503,
      );
    }
  }
}

function requiredString(params: OAuthParams, name: string, max: number): string {
  const value = optionalString(params, name, max);
  if (value === null) throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

function optionalString(params: OAuthParams, name: string, max: number): string | null {
  const value = params[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a single string.`);
  if (value.length < 1 || value.length > max) {
    throw new OAuthError('invalid_request', `${name} must be 1..${max} characters.`);
  }
  // client_id, agent_slug and from are shown to the operator who approves (docs/architecture.md,
  // What others are shown): no line breaks, controls, bidi or invisible characters in any of them.
  const problem = shownTextProblem(value, 'line');
  if (problem) throw new OAuthError('invalid_request', `${name} ${problem.message}.`);
  return value;
}

function actionsOfScope(scope: string | null): MandateAction[] {
  const requested = (scope ?? '').split(/\s+/).filter((s) => s !== '');
  if (requested.length === 0) return [...MANDATE_ACTIONS];
  const unknown = requested.filter((s) => !SCOPES.includes(s));
  if (unknown.length > 0) {
    throw new OAuthError('invalid_scope', `Unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(' ')}.`);
  }
  return MANDATE_ACTIONS.filter((action) => requested.includes(`svc:${action}`));
}

function newUserCode(): string {
  return Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');
}

function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Case-insensitive, hyphen optional (docs/concepts.md, Mandates). */
export function normalizeUserCode(input: string): string | null {
  const code = input.trim().toUpperCase().replace(/-/g, '');
  if (code.length !== 8 || [...code].some((c) => !USER_CODE_ALPHABET.includes(c))) return null;
  return code;
}

function newPublicId(): string {
  return `acct_${Array.from({ length: 16 }, () => BASE32[randomInt(BASE32.length)]).join('')}`;
}
