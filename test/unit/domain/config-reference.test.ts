/** docs/configuration.md is generated from RoomConfig's schema; it must be current and complete. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_REFERENCE_PATH, renderConfigReference } from '../../../scripts/config-reference.js';
import { CONFIG_KEYS, roomConfigSchema } from '../../../src/domain/config.js';
import { inlined, jsonSchemaOf } from '../../../src/operations/json-schema.js';

describe('the configuration reference', () => {
  it('is the file the script generates (run `npx tsx scripts/config-reference.ts` after a change)', () => {
    expect(readFileSync(CONFIG_REFERENCE_PATH, 'utf8')).toBe(renderConfigReference());
  });

  it('documents every RoomConfig key with its meaning and default', () => {
    const text = readFileSync(CONFIG_REFERENCE_PATH, 'utf8');
    const properties = inlined(jsonSchemaOf(roomConfigSchema, 'input')).properties as Record<string, any>;
    expect(Object.keys(properties).sort()).toEqual([...CONFIG_KEYS].sort());
    for (const key of CONFIG_KEYS) {
      expect(text, key).toContain(`## \`${key}\``);
      expect(properties[key].description, key).toMatch(/\w{3,}.*\./);
    }
  });
});
