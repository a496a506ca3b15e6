import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * On-disk record of one key, `<dataDir>/keys/<kid>.json`. `d` (the base64url seed) is absent for
 * keys that came from configuration: those are recorded only so that they stay published after the
 * configured seed changes, without copying the operator's secret to disk.
 */
export interface StoredKeyRecord {
  kty: 'OKP';
  crv: 'Ed25519';
  kid: string;
  x: string;
  d?: string;
  /** Creation order; the highest private key is the signing key when no seed is configured. */
  serial: number;
  created_at: string;
  origin: 'generated' | 'configured';
}

export class KeyStore {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'keys');
  }

  async readAll(): Promise<StoredKeyRecord[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this.readExisting();
  }

  /** The stored keys without creating anything: none when the folder does not exist. */
  async readExisting(): Promise<StoredKeyRecord[]> {
    let listing: string[];
    try {
      listing = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const names = listing.filter((name) => name.endsWith('.json')).sort();
    const records: StoredKeyRecord[] = [];
    for (const name of names) {
      const text = await readFile(join(this.dir, name), 'utf8');
      records.push(parseRecord(text, name));
    }
    return records.sort((a, b) => a.serial - b.serial || a.kid.localeCompare(b.kid));
  }

  async write(record: StoredKeyRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(join(this.dir, `${record.kid}.json`), `${JSON.stringify(record, null, 2)}\n`);
  }
}

function parseRecord(text: string, name: string): StoredKeyRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`key file ${name} is not valid JSON`);
  }
  const r = value as Partial<StoredKeyRecord> | null;
  const valid =
    r !== null &&
    typeof r === 'object' &&
    r.kty === 'OKP' &&
    r.crv === 'Ed25519' &&
    typeof r.kid === 'string' &&
    typeof r.x === 'string' &&
    (r.d === undefined || typeof r.d === 'string') &&
    Number.isInteger(r.serial) &&
    typeof r.created_at === 'string' &&
    (r.origin === 'generated' || r.origin === 'configured');
  if (!valid) throw new Error(`key file ${name} is not a valid key record`);
  return r as StoredKeyRecord;
}

/** Temp file + fsync + rename + directory fsync, so a crash leaves either no file or the whole file. */
async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const file = await open(tmp, 'wx', 0o600);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
