/** `npm start`: one node of the service, configured from the environment (see docs/configuration.md). */
import { applySecretFiles, loadConfig } from './config/index.ts';
import { ConfigError, exitOnConfigError } from './config/errors.ts';
import { wakeMemoryReducer } from './lib/runtime/memory-reducer.ts';

let config;
try {
  applySecretFiles(process.env);
  config = loadConfig();
} catch (e) {
  exitOnConfigError(e);
}
// the service's modules load only once the settings are valid, so a bad one is refused at once
const { startNode } = await import('./app.ts');
// the one-process default opens DATA_DIR/node.sock, so that `npm run repl` joins this node
const node = await startNode(config, { localSocket: 'serve' }).catch((e: Error) => {
  if (e instanceof ConfigError) exitOnConfigError(e);
  // any other refusal to start (a store schema newer than this code, a store that cannot be opened) is one clear line
  console.error(`cannot start: ${e.message}`);
  process.exit(1);
});
// once idle after a burst of load, V8's grown heap goes back to the system (docs/benchmarks.md, memory)
wakeMemoryReducer();
const shutdown = async () => {
  await node.stop();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
