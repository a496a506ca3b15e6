/**
 * The client's response types are the server's zod output schemas (z.infer), so a renamed or retyped
 * response field fails `npm run typecheck`. These assertions are checked by tsc; the runtime check
 * below only confirms the inferred shape matches what the schemas parse.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ConclaveClient, ResponseOf } from '../../src/client/index.js';
import { choose } from '../../src/operations/choose.js';
import type { outcome } from '../../src/operations/outcome.js';
import type { registerWebhook } from '../../src/operations/webhooks.js';

type Resolved<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

describe('client response types', () => {
  it('are inferred from the operation output schemas', () => {
    expectTypeOf<Resolved<ConclaveClient['choose']>>().toEqualTypeOf<z.infer<typeof choose.output>>();
    expectTypeOf<Resolved<ConclaveClient['choose']>['revised']>().toEqualTypeOf<boolean>();
    expectTypeOf<ResponseOf<typeof registerWebhook>['webhook_id']>().toEqualTypeOf<string>();
    // The views are typed too: the outcome's receipts are named fields.
    expectTypeOf<ResponseOf<typeof outcome>>().toEqualTypeOf<z.infer<typeof outcome.output>>();
    expect(
      choose.output.parse({
        ok: true,
        slug: 's',
        decision: 1,
        cast_choice: 'a',
        revised: false,
        status: 'voting',
        resolved_winner: null,
        resolved_outcome: null,
      }).revised,
    ).toBe(false);
  });
});
