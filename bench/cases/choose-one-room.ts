/** `choose` revisions on one open decision (one room turn with a durable commit each) and the agent view read. */
import { createBenchRoom, startBenchService } from '../bench-service.js';
import { type BenchCase, load, ratioTo } from '../table.js';
import { rm } from 'node:fs/promises';

export const chooseOneRoom: BenchCase = {
  id: 'one-room',
  async run(context) {
    const { service, base, dataDir } = await startBenchService();
    try {
      const created = await createBenchRoom(base);
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${created.token}` };
      const choose = await load(
        'choose, one room',
        {
          url: `${base}/api/rooms/${created.slug}/choose`,
          method: 'POST',
          headers,
          body: JSON.stringify({ choice: 'alpha' }),
        },
        context,
      );
      const read = await load(
        'agent view read, one room',
        { url: `${base}/api/rooms/${created.slug}`, headers },
        context,
      );
      return [
        { ...ratioTo(choose, context.baselines.post), note: 'ratio vs bare POST' },
        { ...ratioTo(read, context.baselines.get), note: 'ratio vs bare GET' },
      ];
    } finally {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
