import { type StoredKeyRecord, KeyStore } from './key-store.js';
import {
  generateSigningKey,
  type PublicJwk,
  type SigningKey,
  seedOf,
  signingKeyFromSeed,
  type VerificationKey,
  verificationKeyFromX,
} from './keys.js';

export interface LoadKeyringOptions {
  /** Service data directory; keys live in `<dataDir>/keys/`. Omit to keep keys in memory only. */
  dataDir?: string;
  /** 64 hex chars (CONCLAVE_SIGNING_KEY_SEED). When set, this key signs. */
  seedHex?: string;
}

interface Entry {
  key: VerificationKey;
  signing: SigningKey | null;
  serial: number;
}

/**
 * The service's signing keys. Every key ever used stays published in `jwks()` so that old receipts
 * and mandates keep verifying (docs/receipts.md).
 */
export class Keyring {
  private currentKid: string;

  private constructor(
    private readonly entries: Entry[],
    currentKid: string,
    private readonly store: KeyStore | null,
    /** True when the signing key comes from configuration: rotating then means changing the seed. */
    private readonly pinned: boolean,
  ) {
    this.currentKid = currentKid;
  }

  /** Loads stored keys (and the configured seed); generates and persists a key on first start. */
  static async load(options: LoadKeyringOptions): Promise<Keyring> {
    const store = options.dataDir ? new KeyStore(options.dataDir) : null;
    const entries = (await store?.readAll())?.map(entryFromRecord) ?? [];

    if (options.seedHex !== undefined) {
      const key = signingKeyFromSeed(parseSeedHex(options.seedHex));
      const existing = entries.find((e) => e.key.kid === key.kid);
      if (existing) {
        existing.signing = key;
      } else {
        const serial = nextSerial(entries);
        await store?.write(recordFor(key, serial, 'configured'));
        entries.push({ key, signing: key, serial });
      }
      return new Keyring(entries, key.kid, store, true);
    }

    let latest = entries.filter((e) => e.signing).at(-1);
    if (!latest) {
      const key = generateSigningKey();
      const serial = nextSerial(entries);
      await store?.write(recordFor(key, serial, 'generated'));
      latest = { key, signing: key, serial };
      entries.push(latest);
    }
    return new Keyring(entries, latest.key.kid, store, false);
  }

  /**
   * The keys as they are, writing nothing (for listing them): null when there is no key yet, i.e.
   * when the service has never started on this data directory and no seed is configured.
   */
  static async inspect(options: LoadKeyringOptions): Promise<Keyring | null> {
    const store = options.dataDir ? new KeyStore(options.dataDir) : null;
    const entries = (await store?.readExisting())?.map(entryFromRecord) ?? [];
    if (options.seedHex !== undefined) {
      const key = signingKeyFromSeed(parseSeedHex(options.seedHex));
      const existing = entries.find((e) => e.key.kid === key.kid);
      if (existing) existing.signing = key;
      else entries.push({ key, signing: key, serial: nextSerial(entries) });
      return new Keyring(entries, key.kid, null, true);
    }
    const latest = entries.filter((e) => e.signing).at(-1);
    return latest ? new Keyring(entries, latest.key.kid, null, false) : null;
  }

  get current(): SigningKey {
    const entry = this.entries.find((e) => e.key.kid === this.currentKid);
    if (!entry?.signing) throw new Error('keyring has no current signing key');
    return entry.signing;
  }

  /** Keys this service holds private material for, oldest first. */
  get all(): SigningKey[] {
    return this.entries.flatMap((e) => (e.signing ? [e.signing] : []));
  }

  /** Every published key, current first, then newest to oldest. */
  jwks(): { keys: PublicJwk[] } {
    const rest = this.entries.filter((e) => e.key.kid !== this.currentKid).reverse();
    return { keys: [this.current.jwk, ...rest.map((e) => e.key.jwk)] };
  }

  byKid(kid: string): VerificationKey | undefined {
    const entry = this.entries.find((e) => e.key.kid === kid);
    return entry?.signing ?? entry?.key;
  }

  async rotate(): Promise<SigningKey> {
    if (this.pinned) {
      throw new Error('the signing key is set by CONCLAVE_SIGNING_KEY_SEED; rotate by changing the seed');
    }
    const key = generateSigningKey();
    const serial = nextSerial(this.entries);
    await this.store?.write(recordFor(key, serial, 'generated'));
    this.entries.push({ key, signing: key, serial });
    this.currentKid = key.kid;
    return key;
  }
}

export function loadKeyring(options: LoadKeyringOptions = {}): Promise<Keyring> {
  return Keyring.load(options);
}

function parseSeedHex(seedHex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(seedHex)) {
    throw new Error('CONCLAVE_SIGNING_KEY_SEED must be 64 hex characters (a 32-byte Ed25519 seed)');
  }
  return Buffer.from(seedHex, 'hex');
}

function entryFromRecord(record: StoredKeyRecord): Entry {
  const fail = (why: string) => new Error(`key file ${record.kid}.json: ${why}`);
  if (record.d !== undefined) {
    const signing = signingKeyFromSeed(Buffer.from(record.d, 'base64url'));
    if (signing.jwk.x !== record.x || signing.kid !== record.kid) throw fail('private key does not match x/kid');
    return { key: signing, signing, serial: record.serial };
  }
  const key = verificationKeyFromX(record.x);
  if (key.kid !== record.kid) throw fail('kid is not the thumbprint of x');
  return { key, signing: null, serial: record.serial };
}

function recordFor(key: SigningKey, serial: number, origin: StoredKeyRecord['origin']): StoredKeyRecord {
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    kid: key.kid,
    x: key.jwk.x,
    ...(origin === 'generated' ? { d: Buffer.from(seedOf(key)).toString('base64url') } : {}),
    serial,
    created_at: new Date().toISOString(),
    origin,
  };
}

function nextSerial(entries: Entry[]): number {
  return entries.reduce((max, e) => Math.max(max, e.serial), 0) + 1;
}
