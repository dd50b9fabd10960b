// Preloaded (node --import) into a command under test: as it exits, its peak
// resident memory (VmHWM of /proc/self/status) and the bytes it wrote (wchar
// of /proc/self/io) are written as JSON to the file EXIT_MEASURE_FILE names,
// so that a test can hold them to bounds without timing anything.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.EXIT_MEASURE_FILE;
if (file) {
  process.on('exit', () => {
    const field = (path, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(readFileSync(path, 'utf8'))?.[1]);
    const peakKiB = field('/proc/self/status', 'VmHWM') || process.resourceUsage().maxRSS;
    writeFileSync(file, JSON.stringify({ peakKiB, writtenBytes: field('/proc/self/io', 'wchar') }));
  });
}
