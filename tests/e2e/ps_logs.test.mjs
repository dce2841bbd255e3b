// Issue 18 item 16: `mcpcell ps`, `mcpcell logs`, a gc that reports what it
// checked, and `mcpcell cache list|prune`. Each run here gets its own
// XDG_STATE_HOME (the records and logs, util/state_dir.h) and, where the
// cache is involved, its own HOME, so runs of other sessions on this machine
// are not in the way. The attacks at the end (a symlinked or shared state
// dir, a planted log symlink, another user's records, a huge log) are the
// ones docs/ATTACKS.md lists for this feature.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

/** Polls for what a started run writes; a bound on attempts, not a measurement. */
const POLL_ATTEMPTS = 300;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function stateEnv(extra = {}) {
  const state = makeTempDir('state');
  chmodSync(state, 0o700);
  return { state, env: { ...process.env, XDG_STATE_HOME: state, ...extra } };
}

/** `mcpcell ps --json` under `env`, parsed. */
async function ps(env) {
  const r = await runMcpcell(['ps', '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Starts a long cell with stdin open (like a client); resolves once ps lists it. */
async function startCell(t, env, cellArgs, command) {
  const child = spawn(MCPCELL_BIN, ['run', '--isolate', '--relay=off', ...cellArgs, '--', ...command],
    { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.on('exit', (code) => r(code)));
  t.after(() => child.kill('SIGKILL'));
  for (let i = 0; i < POLL_ATTEMPTS; i++) {
    const listed = (await ps(env)).find((c) => c.pid === child.pid);
    if (listed) return { child, listed, exited, stderr: () => stderr };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  assert.fail(`ps never listed the run (pid ${child.pid}); its stderr:\n${stderr}`);
}

test('ps lists a running cell with its server, client pid, uptime, backend, network and log; logs prints its stderr',
  { timeout: 90_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const { state, env } = stateEnv();
    const cell = await startCell(t, env, [], ['/bin/sh', '-c', 'echo marker-from-the-server >&2; exec sleep 60']);
    const c = cell.listed;
    assert.match(c.id, /^[0-9a-f]{12}$/);
    assert.equal(c.server, '/bin/sh');
    assert.equal(c.client_pid, process.pid, 'the client is the process that started mcpcell');
    assert.equal(c.backend, 'native');
    assert.equal(c.network, 'none');
    assert.ok(c.uptime_s >= 0);
    assert.equal(c.log, path.join(state, 'mcpcell', 'logs', `${c.id}.log`));
    const text = await runMcpcell(['ps'], { env });
    assert.match(text.stdout, new RegExp(`^${c.id}\\s+/bin/sh\\s+${process.pid}\\s+\\S+\\s+native\\s+none\\s+${c.log}$`, 'm'), text.stdout);
    // Only the owner may read or write the records and logs.
    for (const d of ['cells', 'logs']) assert.equal(statSync(path.join(state, 'mcpcell', d)).mode & 0o777, 0o700, d);
    assert.equal(statSync(path.join(state, 'mcpcell', 'cells', `${c.id}.json`)).mode & 0o777, 0o600);
    assert.equal(statSync(c.log).mode & 0o777, 0o600);
    let logs;
    for (let i = 0; i < POLL_ATTEMPTS; i++) {
      logs = await runMcpcell(['logs', c.id.slice(0, 6)], { env });
      if (logs.stdout.includes('marker-from-the-server')) break;
      await sleep(100);
    }
    assert.match(logs.stdout, /marker-from-the-server/, logs.stderr);
    cell.child.stdin.end(); // the client leaves
    await cell.exited;
    assert.match(cell.stderr(), /marker-from-the-server/, 'the client no longer gets the server\'s stderr');
    assert.deepEqual((await ps(env)).filter((x) => x.id === c.id), [], 'a finished run is still listed');
    assert.ok(!existsSync(path.join(state, 'mcpcell', 'cells', `${c.id}.json`)), 'the record outlived the run');
    const after = await runMcpcell(['logs', c.id], { env });
    assert.match(after.stdout, /marker-from-the-server/, 'the log of a finished run is gone');
  });

test('a stale record (dead pid, or a live pid that started at another time) is not listed, and gc removes it',
  { timeout: 60_000 }, async () => {
    const { state, env } = stateEnv();
    const first = await runMcpcell(['ps', '--json'], { env }); // creates the directories
    assert.equal(first.code, 0, first.stderr);
    const cells = path.join(state, 'mcpcell', 'cells');
    const dead = spawnSync('/bin/true').pid;
    const record = (id, pid) => JSON.stringify({ id, pid, pid_start: 12345, client_pid: 1, started: 1, server: 'x',
      backend: 'native', network: 'none', log: '', npx_cache_dir: '' });
    writeFileSync(path.join(cells, 'aaaaaaaaaaaa.json'), record('aaaaaaaaaaaa', dead), { mode: 0o600 });
    // Our own pid with a made-up start time: a recycled pid is not the run.
    writeFileSync(path.join(cells, 'bbbbbbbbbbbb.json'), record('bbbbbbbbbbbb', process.pid), { mode: 0o600 });
    assert.deepEqual(await ps(env), []);
    const gc = await runMcpcell(['gc', '--json'], { env });
    assert.equal(gc.code, 0, gc.stderr);
    const report = JSON.parse(gc.stdout);
    assert.deepEqual({ checked: report.cell_records.checked, removed: report.cell_records.removed },
      { checked: 2, removed: 2 }, gc.stderr);
    assert.deepEqual(readdirSync(cells), []);
    for (const kind of ['temp_dirs', 'cgroups', 'npx_installs', 'cell_id_claims', 'cell_records', 'cell_logs']) {
      assert.ok(Number.isInteger(report[kind]?.checked) && Number.isInteger(report[kind]?.removed), `gc --json: ${kind}`);
      assert.match(gc.stderr, /: \d+ checked, \d+ removed$/m);
    }
    assert.match(gc.stderr, /records of running cells, for 'mcpcell ps' \(.*\): 2 checked, 2 removed/);
  });

test('gc keeps the newest 32 logs and never follows a planted symlink; logs will not print through one',
  { timeout: 60_000 }, async () => {
    const { state, env } = stateEnv();
    assert.equal((await runMcpcell(['ps'], { env })).code, 0);
    const logs = path.join(state, 'mcpcell', 'logs');
    mkdirSync(logs, { recursive: true, mode: 0o700 });
    for (let i = 0; i < 40; i++) {
      const f = path.join(logs, `${i.toString(16).padStart(12, '0')}.log`);
      writeFileSync(f, `log ${i}\n`, { mode: 0o600 });
      utimesSync(f, 1_000_000 + i, 1_000_000 + i);
    }
    const secret = makeTempDir('not-a-log');
    writeFileSync(path.join(secret, 'target'), 'SECRET-BEHIND-A-SYMLINK\n');
    symlinkSync(path.join(secret, 'target'), path.join(logs, 'cccccccccccc.log'));
    const shown = await runMcpcell(['logs', 'cccccccccccc'], { env });
    assert.doesNotMatch(shown.stdout, /SECRET-BEHIND-A-SYMLINK/, 'logs followed a symlink');
    const gc = await runMcpcell(['gc', '--json'], { env });
    const report = JSON.parse(gc.stdout).cell_logs;
    assert.equal(report.checked, 41, gc.stderr);
    const left = readdirSync(logs);
    assert.equal(left.length, 32, left.join(' '));
    assert.ok(left.includes('000000000027.log') && !left.includes('000000000000.log'), 'not the oldest removed');
    assert.equal(readFileSync(path.join(secret, 'target'), 'utf8'), 'SECRET-BEHIND-A-SYMLINK\n', 'gc touched the target');
  });

test('a huge stderr: the client gets every byte; the log stays within two capped files', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { state, env } = stateEnv();
  const bytes = 3 * 1024 * 1024;
  const r = await runInCell([], ['/bin/sh', '-c', `head -c ${bytes} /dev/zero | tr '\\0' x >&2; echo END >&2`],
    { env, input: '' });
  assert.equal(r.code, 0);
  assert.equal((r.stderr.match(/x/g) ?? []).length, bytes, 'the client lost stderr bytes');
  const logs = path.join(state, 'mcpcell', 'logs');
  const files = readdirSync(logs);
  assert.equal(files.length, 2, files.join(' '));
  const cap = 256 * 1024;
  for (const f of files) assert.ok(statSync(path.join(logs, f)).size <= cap, `${f} is over the cap`);
  const id = files[0].slice(0, 12);
  const shown = await runMcpcell(['logs', id], { env });
  assert.match(shown.stdout, /END\n$/, 'the newest part of the log is not the end of the stderr');
});

test('a state dir that is a symlink, or open to others, is refused: the run goes on, untracked, writing nothing there',
  { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const base = makeWritableDir('state-attack');
    const elsewhere = makeWritableDir('state-elsewhere');
    symlinkSync(elsewhere, path.join(base, 'mcpcell'));
    const env = { ...process.env, XDG_STATE_HOME: base };
    const r = await runInCell([], ['/bin/sh', '-c', 'echo ran'], { env, input: '' });
    assert.equal(r.stdout, 'ran\n', r.stderr);
    assert.match(r.stderr, /warning: this run is not listed by 'mcpcell ps' and has no log: .*symlink/, r.stderr);
    assert.deepEqual(readdirSync(elsewhere), [], 'mcpcell wrote through the symlink');
    const listed = await runMcpcell(['ps'], { env });
    assert.notEqual(listed.code, 0);
    assert.match(listed.stderr, /symlink or not a directory; remove it/);
    // A group- or world-readable state dir: others could read the logs.
    const open = makeTempDir('state-open');
    mkdirSync(path.join(open, 'mcpcell', 'logs'), { recursive: true });
    chmodSync(path.join(open, 'mcpcell'), 0o700);
    chmodSync(path.join(open, 'mcpcell', 'logs'), 0o755);
    const r2 = await runInCell([], ['/bin/sh', '-c', 'echo ran'], { env: { ...process.env, XDG_STATE_HOME: open }, input: '' });
    assert.equal(r2.stdout, 'ran\n');
    assert.match(r2.stderr, /mode 0700 .*chmod 700/, r2.stderr);
    assert.deepEqual(readdirSync(path.join(open, 'mcpcell', 'logs')), []);
  });

test('each user sees their own cells: another user\'s ps lists none of root\'s, and cannot use root\'s state dir',
  { timeout: 90_000 }, async (t) => {
    if (process.getuid() !== 0) return t.skip('switches to another user: runs in the root pass');
    if (spawnSync('id', ['-u', 'mcpcell-test']).status !== 0) return t.skip('needs the user mcpcell-test');
    if (await skipWithoutCell(t)) return;
    const { state, env } = stateEnv();
    const cell = await startCell(t, env, [], ['/bin/sleep', '60']);
    const asOther = (args, extra) => spawnSync('runuser', ['-u', 'mcpcell-test', '--', 'env', '-i',
      'PATH=/usr/bin:/bin', 'HOME=/home/mcpcell-test', ...extra, MCPCELL_BIN, ...args], { encoding: 'utf8' });
    const theirs = asOther(['ps', '--json'], []);
    assert.equal(theirs.status, 0, theirs.stderr);
    assert.ok(!theirs.stdout.includes(cell.listed.id), 'another user sees root\'s cell');
    // Pointed at root's state dir (made readable for the attempt's sake), it is refused: not theirs.
    chmodSync(state, 0o755);
    const pointed = asOther(['ps', '--json'], [`XDG_STATE_HOME=${state}`]);
    assert.notEqual(pointed.status, 0);
    assert.match(pointed.stderr, /(must belong to uid|Permission denied)/, pointed.stderr);
    const logs = asOther(['logs', cell.listed.id], [`XDG_STATE_HOME=${state}`]);
    assert.notEqual(logs.status, 0);
    assert.ok(lstatSync(cell.listed.log).uid === 0);
    cell.child.stdin.end();
    await cell.exited;
  });

/** A HOME whose npx cache holds `pkg@version` dirs with the given mtimes (unix s). */
function cacheWith(entries) {
  const home = makeTempDir('cache-home');
  const root = path.join(home, '.cache', 'mcpcell', 'npx');
  mkdirSync(root, { recursive: true });
  for (const [name, mtime] of entries) {
    const dir = path.join(root, name);
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', 'f'), 'x'.repeat(1000));
    utimesSync(dir, mtime, mtime);
  }
  return { home, root };
}

test('cache list shows each version; prune keeps the newest install of each package; --all empties it',
  { timeout: 60_000 }, async () => {
    const { home, root } = cacheWith([['tool@1.0.0', 1_000_000], ['tool@2.0.0', 2_000_000], ['@scope+srv@0.1.0', 1_500_000]]);
    const env = { ...stateEnv().env, HOME: home };
    delete env.XDG_CACHE_HOME;
    const listed = await runMcpcell(['cache', 'list', '--json'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    const names = JSON.parse(listed.stdout).map((p) => `${p.package}@${p.version}`);
    assert.deepEqual(names, ['@scope/srv@0.1.0', 'tool@2.0.0', 'tool@1.0.0']);
    const dry = await runMcpcell(['cache', 'prune', '--dry-run'], { env });
    assert.match(dry.stderr, /would remove tool@1\.0\.0/);
    assert.equal(readdirSync(root).length, 3, 'a dry run removed something');
    const pruned = await runMcpcell(['cache', 'prune'], { env });
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual(readdirSync(root).sort(), ['@scope+srv@0.1.0', 'tool@2.0.0']);
    assert.match(pruned.stderr, /3 checked, 1 removed/);
    const all = await runMcpcell(['cache', 'prune', '--all'], { env });
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(readdirSync(root), []);
  });

test('cache prune --all never removes the version a running cell uses', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { home, root } = cacheWith([['other@1.0.0', 1_000_000]]);
  const pkg = path.join(root, 'busy-srv@1.0.0', 'node_modules', 'busy-srv');
  mkdirSync(pkg, { recursive: true });
  for (let d = pkg; d !== home; d = path.dirname(d)) chmodSync(d, 0o755);
  writeFileSync(path.join(pkg, 'package.json'), '{"name":"busy-srv","version":"1.0.0","bin":{"busy-srv":"cli.js"}}');
  writeFileSync(path.join(pkg, 'cli.js'), '#!/usr/bin/env node\nprocess.stdin.resume();\n');
  chmodSync(path.join(pkg, 'cli.js'), 0o755);
  chmodSync(path.join(pkg, 'package.json'), 0o644);
  const env = { ...stateEnv().env, HOME: home };
  delete env.XDG_CACHE_HOME;
  const child = spawn(MCPCELL_BIN, ['run', '--relay=off', 'npx://busy-srv@1.0.0'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let listed;
  for (let i = 0; i < POLL_ATTEMPTS && !listed; i++) {
    listed = (await ps(env)).find((c) => c.pid === child.pid);
    if (!listed) await sleep(100);
  }
  assert.ok(listed, 'the npx run was never listed');
  assert.equal(listed.npx_cache_dir, path.join(root, 'busy-srv@1.0.0'));
  const pruned = await runMcpcell(['cache', 'prune', '--all'], { env });
  assert.match(pruned.stderr, /1 kept in use by a running cell/, pruned.stderr);
  assert.deepEqual(readdirSync(root), ['busy-srv@1.0.0']);
  child.stdin.end();
});
