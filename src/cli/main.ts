#!/usr/bin/env node
import { endQuietlyOnClosedOutput } from './process.js';

endQuietlyOnClosedOutput();
// The commands are loaded after process.js has run: a server listens for its signals from there (see serverSignals).
const { main } = await import('./program.js');
process.exitCode = await main(process.argv);
