/** `npm start`: one node of the service, configured from the environment (see README). */
import { applySecretFiles, loadConfig } from './config/index.ts';
import { startNode } from './app.ts';

applySecretFiles(process.env);
const node = await startNode(loadConfig()).catch((e: Error) => {
  // a refusal to start (bad configuration, a store schema newer than this code) is one clear line
  console.error(`cannot start: ${e.message}`);
  process.exit(1);
});
const shutdown = async () => {
  await node.stop();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
