/** Process entry of `npm start` (and of `conclave serve`): the service from the environment (src/start.ts). */
import { startServer } from './start.js';

startServer().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
