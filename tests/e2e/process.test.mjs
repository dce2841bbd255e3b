// The cell's process boundary (issue 10 items 2, 4, 11; issue 18 items 1, 12):
// the caller's terminal, process group and session, scheduling and rlimits,
// the host programs mcpcell runs itself, --secret-env and stdin EOF at start.
//
// The terminal tests run mcpcell as the job of a real pseudo-terminal
// (lib/pty_run.py: a new session whose controlling terminal is the pty, the
// job in its own foreground group beside a sentinel `sleep`), with the
// hostile server's terminal_access / process_group / signal_caller_group /
// realtime_priority attempts. A baseline runs the same attempts without a
// cell and shows that they do get the terminal there.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { ATTACK_BIN, assertAttackBinExists } from './attacks_fixture.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { TYPED, assertContained, assertTerminalUntouched, attackArgs, ptyRun, results } from './lib/pty.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const isRoot = process.getuid() === 0;
const TERMINAL_ATTEMPTS = ['terminal_access', 'process_group', 'signal_caller_group', 'realtime_priority'];
/** Enough for the attempts, so the stop order never cuts them short; not a measurement. */
const CELL = ['run', '--isolate', '--relay=off', '--grace', '60s'];

test('baseline: without a cell the terminal attempts do get the terminal', { timeout: 200_000 }, () => {
  assertAttackBinExists();
  const report = ptyRun({ stdin: 'pipe', stdout: 'pipe', stderr: 'tty' },
    [ATTACK_BIN, '--run', 'terminal_access,process_group', attackArgs()]);
  const byName = results(report);
  assert.equal(byName.get('terminal_access').escaped, true, byName.get('terminal_access').detail);
  assert.match(byName.get('terminal_access').detail, /ECHO OFF/);
  assert.equal(byName.get('process_group').escaped, true, byName.get('process_group').detail);
});

// One terminal among the fds at a time: stderr (the SDK's stderr: 'inherit'),
// stdout, stdin (typed input then belongs to the server, through the relay).
for (const fd of ['stderr', 'stdout', 'stdin']) {
  test(`${fd} is the terminal: the cell holds no terminal, shares no group, leaves the terminal as it was`, { timeout: 200_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    assertAttackBinExists();
    const modes = { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', [fd]: 'tty' };
    const report = ptyRun(modes, [MCPCELL_BIN, ...CELL, '--', ATTACK_BIN, '--run', TERMINAL_ATTEMPTS.join(','), attackArgs()]);
    for (const r of results(report).values()) t.diagnostic(`${r.name}: ${r.detail}`);
    assertContained(report, TERMINAL_ATTEMPTS);
    assertTerminalUntouched(report);
    if (fd !== 'stdin') assert.equal(report.typed_left, `${TYPED}\n`, 'what the user typed was read by someone');
  });
}

test('stdin, stdout and stderr are the terminal: relayed through pipes, escape sequences shown', { timeout: 200_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  assertAttackBinExists();
  // The cell writes an OSC title sequence and a CSI report request to its stderr.
  const script = 'printf "title \\033]0;pwned\\007 csi \\302\\2336n end\\n" >&2; exec "$0" "$@"';
  const report = ptyRun({ stdin: 'tty', stdout: 'tty', stderr: 'tty' },
    [MCPCELL_BIN, ...CELL, '--read', ATTACK_BIN, '--', '/bin/sh', '-c', script, ATTACK_BIN, '--run',
      'terminal_access,process_group', attackArgs()]);
  assertContained(report, ['terminal_access', 'process_group']);
  assertTerminalUntouched(report);
  assert.ok(!report.tty_output.includes('\x1b'), `a raw ESC reached the terminal:\n${JSON.stringify(report.tty_output)}`);
  assert.ok(!report.tty_output.includes('\xc2\x9b'), 'a raw C1 CSI reached the terminal');
  assert.match(report.tty_output, /title \^\[\]0;pwned\^G csi <U\+009B>6n end/);
});

test('stdin is the terminal: what the user types reaches the server, Ctrl-D is the client closing stdin', { timeout: 200_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // cat copies what was typed and ends only at end of input: Ctrl-D on the
  // terminal, which mcpcell turns into EOF on the server's stdin pipe.
  const report = ptyRun({ stdin: 'tty', stdout: 'pipe', stderr: 'pipe' },
    [MCPCELL_BIN, 'run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', 'test -t 0 && echo STDIN-IS-A-TTY; exec cat'], { eof: true });
  assert.deepEqual(report.exit, { code: 0, signal: null }, report.stderr);
  assert.equal(report.stdout, `${TYPED}\n`);
  assert.doesNotMatch(report.stdout, /STDIN-IS-A-TTY/);
  assertTerminalUntouched(report);
});

test('a real-time, high-priority caller lends nothing to the cell', { timeout: 200_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) {
    t.skip('only root (CAP_SYS_NICE) can start mcpcell with SCHED_FIFO, nice -5 and the real-time I/O class; ' +
      'as this user the other tests run realtime_priority with the caller\'s own limits');
    return;
  }
  const prefix = ['chrt', '-f', '10', 'nice', '-n', '-5', 'ionice', '-c', '1', '-n', '0'];
  const bare = ptyRun({ stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' },
    [ATTACK_BIN, '--run', 'realtime_priority', attackArgs()], { prefix });
  assert.equal(results(bare).get('realtime_priority').escaped, true, 'baseline: the prefix did not make the caller real-time');
  const report = ptyRun({ stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' },
    [MCPCELL_BIN, ...CELL, '--', ATTACK_BIN, '--run', 'realtime_priority', attackArgs()], { prefix });
  t.diagnostic(results(report).get('realtime_priority').detail);
  assertContained(report, ['realtime_priority']);
});

test('every rlimit is the cell\'s own: the caller\'s raised SIGPENDING and lowered NOFILE', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // prlimit lowers the caller's NOFILE (the cell must not raise it back) and
  // leaves SIGPENDING at the machine's default (tens of thousands).
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--', '/bin/cat', '/proc/self/limits'], { input: '' });
  const viaPrlimit = execFileSync('prlimit', ['--nofile=100:100', MCPCELL_BIN, 'run', '--isolate', '--relay=off', '--', '/bin/cat',
    '/proc/self/limits'], { encoding: 'utf8', input: '' });
  assert.equal(r.code, 0, r.stderr);
  const limit = (text, name) => text.split('\n').find((l) => l.startsWith(name))?.split(/\s{2,}/).slice(1, 3);
  assert.deepEqual(limit(r.stdout, 'Max realtime priority'), ['0', '0']);
  assert.deepEqual(limit(r.stdout, 'Max nice priority'), ['0', '0']);
  assert.deepEqual(limit(r.stdout, 'Max pending signals'), ['4096', '4096']);
  assert.deepEqual(limit(r.stdout, 'Max locked memory'), ['8388608', '8388608']);
  assert.deepEqual(limit(r.stdout, 'Max msgqueue size'), ['819200', '819200']);
  assert.deepEqual(limit(r.stdout, 'Max core file size'), ['0', '0']);
  assert.deepEqual(limit(viaPrlimit, 'Max open files'), ['100', '100']);
});

test('stdin at EOF from the start (/dev/null, a file, closed) is a client that closed: grace, then SIGTERM', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('stdin-eof');
  const file = path.join(dir, 'requests.jsonl');
  writeReadableFile(file, '{}\n');
  const run = (stdin, shell) => new Promise((resolve, reject) => {
    const args = ['run', '--isolate', '--relay=off', '--grace', '500ms', '--', 'sleep', '100'];
    const child = shell
      ? spawn('/bin/sh', ['-c', '"$0" "$@" <&-', MCPCELL_BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(MCPCELL_BIN, args, { stdio: [stdin, 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000); // sleep 100 would outlast it
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stderr });
    });
  });
  const fd = openSync(file, 'r');
  try {
    for (const [label, r] of [['/dev/null', await run('ignore')], ['a file', await run(fd)], ['closed', await run(null, true)]]) {
      assert.deepEqual({ code: r.code, signal: r.signal }, { code: 128 + 15, signal: null },
        `stdin ${label}: the server was not stopped with SIGTERM; stderr:\n${r.stderr}`);
    }
  } finally {
    closeSync(fd);
  }
});

test('--secret-env: the value is in the server\'s environment, not on argv or in mcpcell\'s environment or audit log', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('secret-env');
  const value = `s3cret-${process.pid}-${Date.now()}`;
  const file = path.join(dir, 'token.txt');
  writeReadableFile(file, `${value}\n`);
  const audit = path.join(makeWritableDir('secret-audit'), 'audit.jsonl');
  const child = spawn(MCPCELL_BIN, ['run', '--isolate', '--relay=off', '--audit-log', audit, '--secret', `TOKEN=${file}`, '--secret-env',
    'TOKEN=GH_TOKEN', '--', '/bin/sh', '-c', 'echo "GH_TOKEN=$GH_TOKEN"; exec cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const firstLine = new Promise((resolve) => child.stdout.on('data', (d) => {
    stdout += d;
    if (stdout.includes('\n')) resolve();
  }));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  await Promise.race([firstLine, exited]);
  const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'latin1');
  const environ = readFileSync(`/proc/${child.pid}/environ`, 'latin1');
  child.stdin.end();
  const code = await exited;
  assert.equal(stdout, `GH_TOKEN=${value}\n`, `stderr:\n${stderr}`);
  assert.equal(code, 0, stderr);
  assert.ok(!cmdline.includes(value), 'the value is on mcpcell\'s command line');
  assert.ok(!environ.includes(value), 'the value is in mcpcell\'s environment');
  assert.ok(!readFileSync(audit, 'utf8').includes(value), 'the value is in the audit log');
  assert.ok(!stderr.includes(value), 'the value is on mcpcell\'s stderr');

  // The profile's mcpcell.secrets / secret_env take the same way.
  const profile = path.join(dir, 'profile.json');
  writeReadableFile(profile, JSON.stringify({ mcpcell: { secrets: { TOKEN: file }, secret_env: { TOKEN: 'API_KEY' } } }));
  const viaProfile = await runMcpcell(['run', '--isolate', '--relay=off', '--permission-profile', profile, '--', '/bin/sh', '-c',
    'echo "API_KEY=$API_KEY"'], { input: '' });
  assert.equal(viaProfile.stdout, `API_KEY=${value}\n`, viaProfile.stderr);

  // A value no variable can hold is refused with where to read it instead;
  // a terminal (or anything but a regular file) is no secret file at all.
  const nul = path.join(dir, 'nul.txt');
  writeReadableFile(nul, 'a\0b');
  const refused = await runMcpcell(['run', '--isolate', '--relay=off', '--secret', `T=${nul}`, '--secret-env', 'T', '--', '/bin/true'],
    { input: '' });
  assert.equal(refused.code, 125, refused.stderr);
  assert.match(refused.stderr, /NUL byte.*read it from \/run\/secrets\/T/);
  // Container cells cannot set it: refused before anything starts, --dry-run included.
  for (const extra of [[], ['--dry-run']]) {
    const docker = await runMcpcell(['run', '--isolate=docker', ...extra, '--secret', `T=${file}`, '--secret-env', 'T',
      '--', '/bin/true'], { input: '' });
    assert.equal(docker.code, 2, docker.stderr);
    assert.match(docker.stderr, /--secret-env T=T: a docker cell cannot set it.*--isolate=native/);
    assert.equal(docker.stdout, '');
  }
  const tty = await runMcpcell(['run', '--isolate', '--relay=off', '--secret', 'T=/dev/tty', '--', '/bin/true'], { input: '' });
  assert.equal(tty.code, 2, tty.stderr);
  assert.match(tty.stderr, /not a readable regular file/);
});

test('npm never comes from a --write dir on PATH, a relative PATH entry or the caller\'s cwd', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const planted = makeWritableDir('planted-path');
  const marker = path.join(planted, 'RAN');
  for (const tool of ['npm', 'node']) {
    writeFileSync(path.join(planted, tool), `#!/bin/sh\necho ${tool} >> ${marker}\nexit 0\n`);
    chmodSync(path.join(planted, tool), 0o755);
  }
  // A project .npmrc in the cwd (a cell with --write on it could have written it): another registry.
  writeFileSync(path.join(planted, '.npmrc'), 'registry=http://127.0.0.1:7/\n');
  const userrc = path.join(makeTempDir('npmrc'), 'npmrc');
  writeReadableFile(userrc, 'registry=http://127.0.0.1:9/\nfetch-retries=0\n');
  const env = { ...process.env, PATH: `${planted}:.:${process.env.PATH}`, npm_config_userconfig: userrc };
  const r = await new Promise((resolve, reject) => {
    const child = spawn(MCPCELL_BIN, ['run', '--isolate', '--relay=off', '--write', planted, 'npx://left-pad', '--', 'x'],
      { cwd: planted, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
  assert.ok(!existsSync(marker), `a planted program ran on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}`);
  assert.notEqual(r.code, 0, 'left-pad cannot be installed from an unreachable registry');
  const npm = execFileSync('sh', ['-c', 'command -v npm || true'], { encoding: 'utf8' }).trim();
  if (!npm) {
    t.diagnostic('npm is not installed: the planted programs were not run, but the registry check needs npm');
    return;
  }
  assert.match(r.stderr, /127\.0\.0\.1:9/, `npm did not use the caller's own config:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /127\.0\.0\.1:7/, 'npm read the .npmrc of the caller\'s cwd');
});
