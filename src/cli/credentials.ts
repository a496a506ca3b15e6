/**
 * Where the command line keeps credentials: flags and environment first, then a per-user file
 * (mode 0600) holding the service URL and the tokens of rooms created or joined from this shell.
 * Tokens are written there instead of being printed.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export interface CliConfig {
  base?: string;
  rooms?: Record<string, { token?: string; base?: string }>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONCLAVE_CONFIG) return env.CONCLAVE_CONFIG;
  const root = env.XDG_CONFIG_HOME ?? path.join(homedir(), '.config');
  return path.join(root, 'conclave', 'config.json');
}

export async function readConfig(file: string): Promise<CliConfig> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as CliConfig;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** Writes the file readable by its owner only (0600), its folder 0700. */
export async function writeConfig(file: string, config: CliConfig): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

export async function rememberRoomToken(file: string, slug: string, token: string, base: string): Promise<void> {
  const config = await readConfig(file);
  config.rooms = { ...config.rooms, [slug]: { token, base } };
  await writeConfig(file, config);
}
