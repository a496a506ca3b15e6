/**
 * `conclave keys list|rotate`: the service's receipt signing keys in DATA_DIR/keys. Listing only
 * reads: it never creates a key (or a folder) where the service has not started yet.
 */
import type { Command } from 'commander';
import { jsonOutput, print } from './shell.js';

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description("the service's receipt signing keys (in DATA_DIR/keys)");
  keys
    .command('list')
    .description('list every key in the JWKS, current first (reads only: never creates a key)')
    .action(async (_options: unknown, command: Command) => {
      const { Keyring } = await import('../receipts/index.js');
      const { dataDir, seedHex } = await keySettings();
      const keyring = await Keyring.inspect({ dataDir, ...(seedHex ? { seedHex } : {}) });
      const jwks = keyring?.jwks() ?? { keys: [] };
      const readable = keyring
        ? jwks.keys.map((k, i) => `${i === 0 ? '* current' : '  retired'}  ${k.kid}`).join('\n')
        : `no signing keys in ${dataDir}/keys (DATA_DIR): the service creates one when it first starts there`;
      print(jsonOutput(command), jwks, readable);
    });
  keys
    .command('rotate')
    .description(
      'make a new signing key current; old keys stay in the JWKS so old receipts verify (restart the service to sign with it)',
    )
    .action(async (_options: unknown, command: Command) => {
      const { loadKeyring } = await import('../receipts/index.js');
      const { dataDir, seedHex } = await keySettings();
      const keyring = await loadKeyring({ dataDir, ...(seedHex ? { seedHex } : {}) });
      const key = await keyring.rotate();
      print(
        jsonOutput(command),
        { kid: key.kid, keys: keyring.jwks().keys.length },
        `✓ new signing key ${key.kid}; the JWKS keeps ${keyring.jwks().keys.length - 1} older key(s). Restart the service to sign with it.`,
      );
    });
}

async function keySettings(): Promise<{ dataDir: string; seedHex: string | undefined }> {
  const { loadConfig } = await import('../config.js');
  const config = loadConfig();
  return { dataDir: config.dataDir, seedHex: config.signingKeySeed };
}
