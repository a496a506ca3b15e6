/** Waiting on a child process the bench started (its stdout piped). */
import type { ChildProcess } from 'node:child_process';

/** Resolves once the child prints `marker` (the service logs `conclave listening`); rejects if it exits first. */
export function untilPrinted(child: ChildProcess, marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes(marker)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before printing "${marker}"`)));
  });
}
