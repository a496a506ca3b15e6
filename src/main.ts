/** Process entry of `npm start` (and of `conclave serve`): the service from the environment. */
import { runServer } from './server-process.js';

runServer().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
