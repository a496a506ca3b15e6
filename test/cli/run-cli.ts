/** Runs the `conclave` command line as a child process, as a shell user runs the installed bin. */
import { execFile } from 'node:child_process';
import { BUILT_CLI, repoRoot } from '../support/built.js';

export { repoRoot };

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return runCliWithin(30_000, env, ...args);
}

/** The command line given at most `timeoutMs` (a `verify` that waits on the log takes longer). */
export function runCliWithin(timeoutMs: number, env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BUILT_CLI, ...args],
      { cwd: repoRoot, env, timeout: timeoutMs },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
