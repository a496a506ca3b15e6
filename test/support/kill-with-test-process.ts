/**
 * A child a test starts (a service, nginx, redis-server) dies with the test process, however that
 * ends. The exit listener goes away with the child: test files share a worker process (vitest's
 * `isolate: false`), so listeners of children long gone would otherwise pile up on it.
 */
import type { ChildProcess } from 'node:child_process';

export function killWithTestProcess(child: ChildProcess): void {
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
}
