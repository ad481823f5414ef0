#!/usr/bin/env node
/** The `payments` command (bin of @stablecoin-payments/sdk). */
import { run } from '../src/cli/main.ts';

process.exitCode = await run(process.argv);
