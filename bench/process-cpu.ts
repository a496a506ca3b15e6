/**
 * A process's CPU time as Linux counts it: utime + stime of /proc/PID/stat, every thread included,
 * in clock ticks of USER_HZ, which Linux fixes at 100 a second for user space. Steadier than
 * latency on a shared machine: the CPU a process spends on the same work is what its code decides.
 */
import { readFileSync } from 'node:fs';

const MS_PER_TICK = 10;

/** The CPU time this process has used so far, in ms (10 ms resolution). */
export function processCpuMs(pid: number): number {
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
}
