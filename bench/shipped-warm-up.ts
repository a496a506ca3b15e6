/**
 * The start-up warm-up a measured process gets, as shipped: WARMUP_TURNS as set for the bench run,
 * else the service's default. The test helpers that spawn services turn it off to start faster;
 * the bench cases about start-up and deployments pass this instead.
 */
import { loadConfig } from '../src/config.js';

export function shippedWarmUpEnv(): { WARMUP_TURNS: string } {
  return { WARMUP_TURNS: process.env.WARMUP_TURNS ?? String(loadConfig({}).warmupTurns) };
}
