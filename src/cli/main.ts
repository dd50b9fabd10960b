#!/usr/bin/env node
import nodeModule from 'node:module';
import { endQuietlyOnClosedOutput } from './process.js';

// Node >= 22.1 keeps the compiled code of every module on disk for the next start; older Node has no such call.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
endQuietlyOnClosedOutput();
// The commands are loaded after process.js has run: a server listens for its signals from there (see serverSignals).
// Only the invoked command's modules are loaded (commands.ts): a script that runs a command in a loop pays for no other.
const [{ mainWith }, { programFor }] = await Promise.all([import('./program-core.js'), import('./commands.js')]);
process.exitCode = await mainWith(process.argv, programFor);
