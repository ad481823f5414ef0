/** `npm start`: one node of the service, configured from the environment (see README). */
import { applySecretFiles, loadConfig } from './config/index.ts';
import { startNode } from './app.ts';

applySecretFiles(process.env);
const node = await startNode(loadConfig());
const shutdown = async () => {
  await node.stop();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
