/**
 * The period of the event-loop delay timers: the back-pressure gauge's (http/back-pressure.ts) and
 * the lag metrics' (metrics.ts). Each such timer wakes the process at this period even when it is
 * idle, about 45 µs of CPU a wake-up on a 2-core machine; at the 10 ms both used before, two of them
 * cost an idle process about 8 ms of CPU a second (docs/performance.md, An idle process). At 50 ms
 * the gauge still tells its one-second limit from a healthy loop by a factor of twenty, and the lag
 * metrics get twenty samples a second.
 */
export const LOOP_DELAY_RESOLUTION_MS = 50;
