// A cell's host uid is its own (src/cell/cell_ids.h). While a docker cell and
// native cells of a root caller run, host processes of a real user (uid 1000,
// `cloudsdk` on the dev machine) and of nobody (65534, shared by daemons)
// cannot read the cell's secret through /proc/PID/root, open its stdio, signal
// it (kill -0: EPERM) or ptrace it; the cell's own uid can (the control: the
// uid is the only thing keeping them out). Concurrent cells get different ids,
// and the claims are gone after the runs. Root only (switches users); the
// docker part needs MCPCELL_E2E_BACKEND=docker like the other container tests.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { isCellHostId } from './lib/host.mjs';
import { EXIT, assertBinaryExists, runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const DOCKER = process.env.MCPCELL_E2E_BACKEND === 'docker';
const OUTSIDERS = { 1000: 'a real host user (uid 1000)', 65534: 'nobody (65534)' };

/** Runs `cmd args` as uid:gid `id`, no supplementary groups; {code, stderr}. */
function runAs(id, cmd, args) {
  const r = spawnSync('setpriv', ['--reuid', String(id), '--regid', String(id), '--clear-groups', '--', cmd, ...args],
    { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stderr: `${r.stderr}${r.stdout}` };
}

/** The host pid whose argv is /bin/sh … `marker` (the server, not mcpcell or docker-init), and its Uid line. */
function serverOf(marker) {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv;
    let status;
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    if (argv[0] !== '/bin/sh' || !argv.includes(marker)) continue;
    const ids = status.match(/^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m).slice(1).map(Number);
    const gids = status.match(/^Gid:\s+(\d+)\s+(\d+)\s+(\d+)/m).slice(1).map(Number);
    return { pid: Number(name), uid: ids[0], ids, gids };
  }
  return null;
}

/** Starts mcpcell at `level` with a secret; resolves once the server read it and said "up". */
async function startCell(t, level, value) {
  const dir = makeTempDir(`uid-${level}`);
  const secret = path.join(dir, 'token');
  writeReadableFile(secret, value);
  const marker = `cell-uid-${level}-${process.hrtime.bigint()}`;
  const script = 'test -s /run/secrets/api && echo up; while read -r l; do :; done';
  const child = spawn(MCPCELL_BIN, ['run', `--isolate=${level}`, '--secret', `api=${secret}`, '--',
    '/bin/sh', '-c', script, marker], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  for (let i = 0; i < 600 && !out.includes('up') && child.exitCode === null; i++) await sleep(100);
  assert.equal(out, 'up\n', `${level} cell did not start; stderr: ${err}`);
  const server = serverOf(marker);
  assert.ok(server, `no host process runs the ${level} server (${marker})`);
  return { level, child, server, exited, stderr: () => err };
}

/** Paths a cell's stdio is reachable by: /proc/PID/fd/0 and, for a FIFO cell, the FIFO on /dev/shm and in its root. */
function stdioPaths(cell) {
  const paths = [`/proc/${cell.server.pid}/fd/0`];
  if (cell.level === 'docker') {
    paths.push(`/proc/${cell.server.pid}/root/run/mcpcell-stdio/in`);
    for (const n of readdirSync('/dev/shm')) {
      if (n.startsWith(`mcpcell-stdio-${cell.child.pid}-`)) paths.push(path.join('/dev/shm', n, 'd', 'in'));
    }
    assert.equal(paths.length, 3, `the docker cell's FIFO directory: ${paths}`);
  }
  return paths;
}

function assertOutsiderLockedOut(cell, id, who) {
  const { pid } = cell.server;
  for (const p of [`/proc/${pid}/root/run/secrets/api`, `/proc/${pid}/environ`, `/proc/${pid}/mem`]) {
    const read = runAs(id, 'head', ['-c', '1', p]);
    assert.notEqual(read.code, 0, `${who} read ${p} of the ${cell.level} cell`);
    assert.match(read.stderr, /Permission denied/, `${who}, ${p}`);
  }
  for (const p of stdioPaths(cell)) {
    const open = runAs(id, 'sh', ['-c', ': <>"$1"', 'sh', p]);
    assert.notEqual(open.code, 0, `${who} opened the ${cell.level} cell's stdio at ${p}`);
    assert.match(open.stderr, /Permission denied/, `${who}, ${p}`);
  }
  const kill = runAs(id, 'sh', ['-c', 'kill -0 "$1"', 'sh', String(pid)]);
  assert.notEqual(kill.code, 0, `${who} may signal the ${cell.level} server`);
  assert.match(kill.stderr, /not permitted/i, `${who}, kill -0 ${pid}`);
  const trace = runAs(id, 'strace', ['-qq', '-e', 'trace=none', '-p', String(pid)]);
  assert.notEqual(trace.code, 0, `${who} attached to the ${cell.level} server with ptrace`);
  assert.match(trace.stderr, /Operation not permitted/, `${who}, strace -p ${pid}`);
}

/**
 * The controls: root reads the secret at the path the outsiders were refused,
 * and the cell's own host uid may signal the server, so the refusals above
 * are the uid's doing. Through /proc/PID/root the own uid gets in to a docker
 * cell only: a native cell is in a user namespace of its own, and commoncap's
 * ptrace check (cap_ptrace_access_check) wants the tracer in that namespace or
 * CAP_SYS_PTRACE over it, which a host uid without capabilities never has.
 */
function assertControls(cell, value) {
  const { pid, uid } = cell.server;
  const secretPath = `/proc/${pid}/root/run/secrets/api`;
  assert.equal(readFileSync(secretPath, 'utf8'), value, `control: root reads ${secretPath}`);
  assert.equal(runAs(uid, 'sh', ['-c', 'kill -0 "$1"', 'sh', String(pid)]).code, 0, `control: uid ${uid} may signal its own cell`);
  const read = spawnSync('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--',
    'cat', secretPath], { encoding: 'utf8', timeout: 20_000 });
  if (cell.level === 'docker') {
    assert.equal(read.stdout, value, `control: the docker cell's own uid ${uid} reads ${secretPath}: ${read.stderr}`);
  } else {
    assert.match(read.stderr, /Permission denied/, `the native cell's own uid ${uid} is kept out of ${secretPath} by its user namespace`);
  }
}

test('cells run as a host uid of their own: uid 1000 and nobody cannot read, open, signal or trace them; concurrent cells differ', { timeout: 180_000 }, async (t) => {
  if (process.getuid() !== 0) {
    t.skip('switches between host users and needs a root caller (whose native cell user was nobody): runs as root');
    return;
  }
  assertBinaryExists();
  const value = `uid-secret-${process.hrtime.bigint()}`;
  const levels = DOCKER ? ['docker', 'native', 'native'] : ['native', 'native'];
  if (!DOCKER) t.diagnostic('docker cell left out: set MCPCELL_E2E_BACKEND=docker with a running dockerd');
  const cells = await Promise.all(levels.map((level) => startCell(t, level, value)));
  for (const cell of cells) {
    const { ids, gids } = cell.server;
    assert.ok(isCellHostId(cell.server.uid), `${cell.level} server runs as host uid ${cell.server.uid}`);
    assert.deepEqual(ids, [cell.server.uid, cell.server.uid, cell.server.uid], `${cell.level}: real, effective, saved uid`);
    assert.deepEqual(gids, [cell.server.uid, cell.server.uid, cell.server.uid], `${cell.level}: the gid is the same number`);
    assert.equal(spawnSync('getent', ['passwd', String(cell.server.uid)]).status, 2, 'no host user has the cell uid');
    assert.ok(existsSync(`/run/mcpcell/cell-ids/${cell.server.uid}`), `${cell.level}: the claim is held`);
  }
  const uids = cells.map((c) => c.server.uid);
  assert.equal(new Set(uids).size, uids.length, `concurrent cells share a host uid: ${uids}`);
  for (const cell of cells) {
    for (const [id, who] of Object.entries(OUTSIDERS)) assertOutsiderLockedOut(cell, id, who);
    const other = cells.find((c) => c !== cell);
    assertOutsiderLockedOut(cell, other.server.uid, `another cell's uid (${other.server.uid})`);
    assertControls(cell, value);
  }
  for (const cell of cells) {
    cell.child.stdin.end();
    assert.equal(await cell.exited, 0, cell.stderr());
  }
  for (const uid of uids) assert.equal(existsSync(`/run/mcpcell/cell-ids/${uid}`), false, `claim ${uid} left after the run`);
});

test('root, native, --idmap=off: a --write dir must be writable through its other bits; a shared dir\'s new files belong to the run\'s own uid', { timeout: 60_000 }, async (t) => {
  if (process.getuid() !== 0) {
    t.skip('a root caller\'s cell user is the claimed id (a normal user\'s is the user): runs as root');
    return;
  }
  const closed = makeTempDir('uid-write-closed');
  chmodSync(closed, 0o755);
  // Without idmapped grants (--idmap=off, the behaviour before issue 14 item 5)
  // the cell's own uid cannot write root's 0755 dir: refused up front.
  const refused = await runMcpcell(['run', '--isolate=native', '--idmap=off', '--write', closed, '--', '/bin/true']);
  assert.equal(refused.code, EXIT.usage, refused.stderr);  // bad input, as the README's exit-code table says
  assert.match(refused.stderr, /a host uid of its own, claimed for this run \(now \d+\)/);
  assert.ok(refused.stderr.includes(`chmod o+w ${closed}`), refused.stderr);
  // By default the grant is mounted as its owner's (idmap.test.mjs has the rest):
  // the cell writes it, and the file is root's, the dir's owner.
  const mine = path.join(closed, 'as-owner');
  const mapped = await runMcpcell(['run', '--isolate=native', '--write', closed, '--', '/bin/sh', '-c', `echo x > '${mine}'`]);
  assert.equal(mapped.code, 0, mapped.stderr);
  assert.equal(statSync(mine).uid, 0);
  const open = makeWritableDir('uid-write-open');
  const file = path.join(open, 'made');
  const r = await runMcpcell(['run', '--isolate=native', '--write', open, '--', '/bin/sh', '-c', `echo x > '${file}'`]);
  assert.equal(r.code, 0, r.stderr);
  const st = statSync(file);
  assert.ok(isCellHostId(st.uid), `the file is owned by ${st.uid}, not the run's own id`);
  assert.equal(st.gid, st.uid);
});
