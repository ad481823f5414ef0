// Compiles Solidity from the repository's own sources with solc-js (the `solc` npm package:
// the compiler is emscripten/wasm shipped inside the package, nothing is downloaded).
// Output is cached in memory per process, keyed by source path + contract name.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, basename } from 'node:path';
import solc from 'solc';

export interface CompiledContract {
  contractName: string;
  /** JSON ABI, usable directly with ethers' ContractFactory/Contract. */
  abi: readonly Record<string, unknown>[];
  /** Creation bytecode, 0x-prefixed. */
  bytecode: string;
  /** Runtime (deployed) bytecode, 0x-prefixed. */
  deployedBytecode: string;
  /** The solc version that produced it, e.g. "0.8.37+commit.…". */
  compilerVersion: string;
}

interface SolcOutputError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage: string;
}

interface SolcContractOutput {
  abi: Record<string, unknown>[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: SolcOutputError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

/** EVM target: every hardfork Hardhat/EDR runs by default executes cancun bytecode. */
const EVM_VERSION = 'cancun';

const cache = new Map<string, CompiledContract>();

/**
 * Compiles one Solidity file (no imports) and returns the named contract.
 * `sourcePath` is absolute or relative to the repository root (process.cwd()).
 */
export function compileSolidity(sourcePath: string, contractName: string): CompiledContract {
  const fullPath = isAbsolute(sourcePath) ? sourcePath : join(process.cwd(), sourcePath);
  const key = `${fullPath}:${contractName}`;
  const hit = cache.get(key);
  if (hit) return hit;

  const fileName = basename(fullPath);
  const input = {
    language: 'Solidity',
    sources: { [fileName]: { content: readFileSync(fullPath, 'utf8') } },
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed for ${sourcePath}:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contract = output.contracts?.[fileName]?.[contractName];
  if (!contract) throw new Error(`contract ${contractName} not found in ${sourcePath}`);
  const compiled: CompiledContract = {
    contractName,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    compilerVersion: String(solc.version()),
  };
  cache.set(key, compiled);
  return compiled;
}

/** contracts/TestUSDC.sol, compiled from source (cached per process). */
export function compileTestUsdc(): CompiledContract {
  return compileSolidity('contracts/TestUSDC.sol', 'TestUSDC');
}
