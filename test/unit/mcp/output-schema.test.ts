/**
 * The tools' output schemas (src/mcp/output-schema.ts) only loosen the REST answers' schemas: every
 * captured REST example of every tool's operation, with `ok: true`, passes its tool's outputSchema
 * under the MCP SDK's own validator, and so does an error envelope; a body that is neither does not.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { describe, expect, it } from 'vitest';
import { RESPONSE_EXAMPLES } from '../../../src/http/openapi-examples.js';
import { toolOutputSchema } from '../../../src/mcp/output-schema.js';
import { OPERATIONS } from '../../../src/operations/table.js';

const validator = new AjvJsonSchemaValidator();
const TOOLS = OPERATIONS.filter((operation) => operation.mcp);
/** Operations whose answer has more shapes than its own example shows. */
const MORE_EXAMPLES: Record<string, string[]> = { getRoom: ['getRoomFull'] };

describe('MCP output schemas', () => {
  it.each(TOOLS.map((operation) => [operation.mcp!.tool, operation] as const))(
    '%s accepts its REST examples with ok: true, and the error envelope',
    (_tool, operation) => {
      const check = validator.getValidator(toolOutputSchema(operation));
      const examples = [
        operation.example.output ?? RESPONSE_EXAMPLES[operation.name],
        ...(MORE_EXAMPLES[operation.name] ?? []).map((name) => RESPONSE_EXAMPLES[name]),
      ];
      // An MCP-only operation (list_rooms) has no REST example; test/e2e/mcp-lean-catalog.test.ts calls it.
      expect(examples.filter(Boolean).length > 0 || operation.mcpOnly === true, operation.name).toBe(true);
      for (const example of examples.filter(Boolean)) {
        const result = check({ ok: true, ...example });
        expect(result.valid, result.errorMessage).toBe(true);
      }
      const refusal = { error: { code: 'input.invalid', message: 'The field "x" is invalid.', request_id: 'r1' } };
      expect(check(refusal).valid).toBe(true);
      expect(check({ ok: false }).valid).toBe(false);
      expect(check({ error: { message: 'no code' } }).valid).toBe(false);
    },
  );

  it('says which OpenAPI component has every nested field', () => {
    const outcome = OPERATIONS.find((operation) => operation.mcp?.tool === 'outcome')!;
    const schema = toolOutputSchema(outcome);
    expect(schema.description).toContain('OutcomeResponse in /v1/openapi.json');
    // Nested rows keep their type only: the component has the rest.
    expect(JSON.stringify(schema)).not.toContain('receipt_jws":{"type":"string"},"transparency_log');
  });
});
