/**
 * Prometheus's own checker (Debian package `prometheus`; .ci/run installs it). Missing locally, the
 * checks that need it are skipped; under CI=true a missing promtool fails the run.
 */
import { existsSync } from 'node:fs';

export const PROMTOOL = '/usr/bin/promtool';
export const hasPromtool = existsSync(PROMTOOL);
if (!hasPromtool && process.env.CI === 'true') {
  throw new Error(`${PROMTOOL} is missing (Debian package prometheus), and CI requires the metrics checks`);
}
