/**
 * Witness cosigning in the C2SP tlog-witness shape: after each publication the integrator offers
 * the new checkpoint to every configured witness (`POST <witness>/add-checkpoint` with the size the
 * witness last cosigned, a consistency proof from it, and the signed checkpoint). A witness answers
 * with its cosignature line (C2SP tlog-cosignature/v1, key type 0x04), which is verified against
 * the configured witness key and stored; `/log/checkpoint` serves the checkpoint with every
 * cosignature recorded for it. A witness that refuses or is away costs nothing but its line.
 */
import type { LogStore } from '../store/tlog-port.js';
import type { Hash } from './merkle.js';
import {
  COSIGNATURE_ALG,
  type Note,
  noteSignedBy,
  parseNote,
  parseVerifierKey,
  toBase64,
  type VerifierKey,
} from './note.js';

export interface WitnessConfig {
  /** Base URL of the witness; `add-checkpoint` is appended. */
  url: string;
  /** The witness's verifier key, `<name>+<hex id>+<base64(0x04 ‖ key)>`. */
  key: string;
}

/** `LOG_WITNESSES`: comma-separated `<url> <verifier key>` pairs. Throws with a reason on a bad entry. */
export function parseWitnesses(text: string | undefined): WitnessConfig[] {
  if (!text?.trim()) return [];
  return text.split(',').map((entry) => {
    const [url, key, ...rest] = entry.trim().split(/\s+/);
    if (!url || !key || rest.length > 0) throw new Error(`"${entry.trim()}" is not "<url> <verifier key>"`);
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`${url} is not an http(s) URL`);
    if (parseVerifierKey(key).alg !== COSIGNATURE_ALG) {
      throw new Error(`${key} is not a cosignature/v1 (type 0x04) witness key`);
    }
    return { url: url.endsWith('/') ? url : `${url}/`, key };
  });
}

const TIMEOUT_MS = 5000;
const MAX_RESPONSE_BYTES = 16_384;

interface Witness {
  url: string;
  key: VerifierKey;
  /** The size this witness last cosigned (as far as this process knows). */
  known: number;
  busy: boolean;
}

export class Witnesses {
  private readonly witnesses: Witness[];

  constructor(
    configs: WitnessConfig[],
    private readonly store: LogStore,
    private readonly onError: (error: unknown, message: string) => void,
  ) {
    this.witnesses = configs.map((config) => ({
      url: config.url,
      key: parseVerifierKey(config.key),
      known: 0,
      busy: false,
    }));
  }

  get configured(): boolean {
    return this.witnesses.length > 0;
  }

  /** Offers a published checkpoint to every witness not already busy; never throws, never waits. */
  offer(note: string, size: number, consistency: (from: number) => Hash[]): Promise<void> {
    return Promise.all(
      this.witnesses.map(async (witness) => {
        if (witness.busy || witness.known >= size) return;
        witness.busy = true;
        try {
          await this.cosign(witness, note, size, consistency);
        } catch (error) {
          this.onError(error, `witness ${witness.key.name} did not cosign checkpoint ${size}`);
        } finally {
          witness.busy = false;
        }
      }),
    ).then(() => undefined);
  }

  private async cosign(
    witness: Witness,
    note: string,
    size: number,
    consistency: (from: number) => Hash[],
  ): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const old = Math.min(witness.known, size);
      const proof = consistency(old).map(toBase64);
      const body = `old ${old}\n${proof.map((line) => `${line}\n`).join('')}\n${note}`;
      const response = await fetch(`${witness.url}add-checkpoint`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'error',
      });
      const text = (await response.text()).slice(0, MAX_RESPONSE_BYTES);
      if (response.status === 409 && /^(0|[1-9][0-9]*)\n?$/.test(text)) {
        // The witness holds another size for this log: offer again from there.
        witness.known = Number(text.trim());
        continue;
      }
      if (response.status !== 200) throw new Error(`add-checkpoint answered ${response.status}: ${text.slice(0, 200)}`);
      const checkpoint = parseNote(note);
      const line = text.split('\n').find((candidate) => candidate.startsWith(`\u2014 ${witness.key.name} `));
      if (!line) throw new Error('the answer carries no cosignature line of this witness');
      const cosigned: Note = { text: checkpoint.text, signatures: parseNote(`x\n\n${line}\n`).signatures };
      if (!(await noteSignedBy(cosigned, witness.key))) throw new Error('the cosignature does not verify');
      await this.store.addCosignature(size, witness.key.name, `${line}\n`);
      witness.known = size;
      return;
    }
  }
}

/** A published note with the cosignature lines recorded for it appended (signed-note allows any number). */
export function withCosignatures(note: string, lines: readonly string[]): string {
  return lines.length === 0 ? note : `${note}${lines.join('')}`;
}
