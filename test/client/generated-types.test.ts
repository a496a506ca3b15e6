/**
 * src/client/types/generated.ts is written by scripts/client-types.ts from the operation schemas; a
 * schema change without a regeneration leaves the client's types behind, so this fails until the
 * committed file is the one the script writes now.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_COMMAND, CLIENT_TYPES_PATH, renderClientTypes } from '../../scripts/client-types.js';

describe('the client’s generated wire types', () => {
  it('are what the script generates from the schemas now', async () => {
    const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    const fresh = await renderClientTypes();
    expect(committed === fresh, `src/client/types/generated.ts is stale: run \`${CLIENT_TYPES_COMMAND}\``).toBe(true);
  }, 60_000);

  it('name every request and response, with the schema descriptions as JSDoc and RoomConfig closed', () => {
    const text = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    for (const name of ['AgentRoomView', 'Outcome', 'RoomConfig', 'ChooseRequest', 'CreateRoomRequest', 'RoomEvent']) {
      expect(text, name).toMatch(new RegExp(`^export type ${name} = `, 'm'));
    }
    expect(text.match(/@description /g)?.length).toBeGreaterThan(300);
    // The published declarations name nothing of the server (test/package/client-pack.test.ts checks the package).
    expect(text.match(/fastify|zod|xstate|RequestContext/g) ?? []).toEqual([]);
    for (const name of ['RoomConfig', 'RoomConfigInput', 'RoomSettingsPatch', 'AuthorityConfig']) {
      const body = text.match(new RegExp(`^    ${name}: \\{\\n([\\s\\S]*?)^    \\};`, 'm'))?.[1];
      expect(body, name).toContain(name === 'AuthorityConfig' ? 'kind' : 'voting_window');
      expect(body, name).not.toContain('[key: string]');
    }
  });
});
