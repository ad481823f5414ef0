// Child process started by hardhat-node.ts: runs Hardhat 3's `node` task (an EDR-backed
// JSON-RPC server) in this process, and exits as soon as its parent goes away (stdin closes),
// so that a killed test runner never leaves a chain running.
//
// Arguments (JSON in argv[2]): { projectRoot, workDir, hostname, port, chainId }; Hardhat's
// artifacts and cache directories go to workDir, never into the repository.
// Hardhat prints "Started HTTP and WebSocket JSON-RPC server at http://HOST:PORT/" on stdout.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHardhatRuntimeEnvironment } from 'hardhat/hre';

interface ChildArgs {
  projectRoot: string;
  workDir: string;
  hostname: string;
  port: number;
  chainId: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as ChildArgs;

const exit = (): void => process.exit(0);
// the work dir is removed however this process ends (stop(), or the parent killed)
process.on('exit', () => rmSync(args.workDir, { recursive: true, force: true }));
process.stdin.on('end', exit);
process.stdin.on('close', exit);
process.stdin.on('error', exit);
process.stdin.resume();
process.on('SIGTERM', exit);
process.on('SIGINT', exit);
process.on('disconnect', exit);

const hre = await createHardhatRuntimeEnvironment(
  {
    paths: { artifacts: join(args.workDir, 'artifacts'), cache: join(args.workDir, 'cache') },
    networks: {
      node: {
        type: 'edr-simulated',
        chainId: args.chainId,
        mining: { auto: true, interval: 0 },
      },
    },
  },
  {},
  args.projectRoot,
);

await hre.tasks.getTask('node').run({ hostname: args.hostname, port: args.port });
