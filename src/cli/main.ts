#!/usr/bin/env node
import { endQuietlyOnClosedOutput } from './process.js';
import { main } from './program.js';

endQuietlyOnClosedOutput();
process.exitCode = await main(process.argv);
