// Running a command as the job of a real pseudo-terminal (pty_run.py) and
// reading the hostile server's "RESULTS" line from it: shared by
// process.test.mjs (native cells) and docker_terminal.test.mjs.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { E2E_DIR } from './paths.mjs';

/** The line typed on the terminal before the job starts. */
export const TYPED = `typed-by-the-user-${process.pid}`;

const PTY_RUN = path.join(E2E_DIR, 'lib', 'pty_run.py');

export function attackArgs() {
  return JSON.stringify({ secret: TYPED, caller_pgid: '@PGID@' });
}

/** Runs `cmd` as the job of a fresh pty (see lib/pty_run.py); resolves to its report. */
export function ptyRun(modes, cmd, { prefix = [], eof = false } = {}) {
  const out = execFileSync('python3', [PTY_RUN, '--stdin', modes.stdin, '--stdout', modes.stdout, '--stderr',
    modes.stderr, '--typed', TYPED, ...(eof ? ['--eof'] : []), '--', ...prefix, ...cmd],
  { encoding: 'utf8', timeout: 200_000 });
  return JSON.parse(out);
}

/** The hostile server's "RESULTS [...]" line, from its stdout pipe or the terminal. */
export function results(report) {
  const text = report.stdout.includes('RESULTS ') ? report.stdout : report.tty_output;
  const at = text.indexOf('RESULTS ');
  assert.ok(at >= 0, `no RESULTS line; report: ${JSON.stringify(report, null, 1)}`);
  const line = text.slice(at + 'RESULTS '.length).split(/\r?\n/)[0];
  return new Map(JSON.parse(line).map((r) => [r.name, r]));
}

export function assertContained(report, names) {
  const byName = results(report);
  for (const name of names) {
    const r = byName.get(name);
    assert.ok(r, `${name} missing`);
    assert.equal(r.escaped, false, `${name} ESCAPED the cell: ${r.detail}`);
  }
}

export function assertTerminalUntouched(report) {
  assert.deepEqual(report.exit, { code: 0, signal: null }, `exit; terminal output:\n${report.tty_output}\nstderr:\n${report.stderr}`);
  assert.equal(report.echo_after, report.echo_before, 'the terminal\'s echo flag changed');
  assert.equal(report.attrs_unchanged, true, 'the terminal\'s modes changed');
  assert.equal(report.fg_after, report.job_pgid, `the foreground process group moved to ${report.fg_after}`);
  assert.equal(report.sentinel_alive, true, `the sentinel in the caller's group died: ${report.sentinel_fate}`);
}
