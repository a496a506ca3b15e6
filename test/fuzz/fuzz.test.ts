/** A short run of the fuzzer (npm run fuzz runs it at full length): every answer sound, no secret logged. */
import { describe, expect, it } from 'vitest';
import { runFuzz, summarize } from './fuzzer.js';

describe('fuzzing the HTTP and MCP surface', () => {
  it('answers 2,000 generated requests without a 5xx, outside the envelope, a crash or a logged secret', {
    timeout: 120_000,
  }, async () => {
    const report = await runFuzz({ requests: 2000, seed: 7, concurrency: 8 });
    const summary = summarize(report);
    expect(report.sent, summary).toBe(2000);
    expect(report.serverErrors, summary).toEqual([]);
    expect(report.nonEnvelope, summary).toEqual([]);
    expect(report.crashed, summary).toBe(false);
    expect(report.credentialsInLog, summary).toEqual([]);
  });
});
