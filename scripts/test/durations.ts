// Records how long each test file takes in a whole run (test/durations.json), the order in which
// test/setup/longest-first.ts hands the files to vitest's workers: longest first.
//
//   npm run test:durations                  runs the whole suite (built first) and records it
//   npm run test:durations -- report.json   records a report of vitest's (--reporter=json) instead
//
// Files the report does not name keep what was recorded; files that no longer exist are dropped.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { writeJsonAtomic } from '../../src/util/fs.js';
import { DURATIONS_FILE, recordedDurations } from '../../test/setup/longest-first.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface Report {
  success: boolean;
  testResults: { name: string; startTime: number; endTime: number }[];
}

function runSuite(): Report {
  const dir = mkdtempSync(join(tmpdir(), 'depotkit-durations-'));
  try {
    const out = join(dir, 'report.json');
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed: nothing recorded');
    spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`], { cwd: ROOT, stdio: 'inherit' });
    if (!existsSync(out)) throw new Error('vitest wrote no report: nothing recorded');
    return JSON.parse(readFileSync(out, 'utf8')) as Report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function record(from: string | undefined): Promise<void> {
  const report = from ? (JSON.parse(readFileSync(from, 'utf8')) as Report) : runSuite();
  const seconds: Record<string, number> = { ...recordedDurations() };
  for (const file of report.testResults) seconds[relative(ROOT, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
  const kept = Object.fromEntries(
    Object.entries(seconds)
      .filter(([file]) => existsSync(join(ROOT, file)))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  await writeJsonAtomic(DURATIONS_FILE, kept, { force: true });
  console.log(
    `${relative(ROOT, DURATIONS_FILE)}: ${Object.keys(kept).length} files, ${report.testResults.length} from this run${report.success ? '' : ' (some tests failed)'}`,
  );
}

// One sentence and exit 1, not a stack trace.
await record(process.argv[2]).catch((err: Error) => {
  console.error(`test:durations: ${err.message}`);
  process.exitCode = 1;
});
