// Container cells (docker, and gVisor = docker with the runsc runtime) through
// a real dockerd: real npm servers driven by the SDK client, stdio integrity,
// the hardening as `docker inspect` shows it, secrets, stop/timeout/kill -9
// cleanup and the fallback rules when the engine is down.
//
// These need a running engine and root (the docker socket): scripts/test.sh's
// e2e-docker step starts dockerd (scripts/docker.sh) and runs this file with
// MCPCELL_E2E_BACKEND=docker. There, a missing engine FAILS every test. In the
// plain e2e runs (no MCPCELL_E2E_BACKEND) the file skips with that reason.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EXIT, assertBinaryExists, resultText, runMcpcell } from './lib/mcpcell.mjs';
import { isCellHostId } from './lib/host.mjs';
import { MCPCELL_BIN, NODE_BIN, nodeCellArgs, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';
import { engineRequest, watcherOf } from './lib/engine.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const LEVELS = ['docker', 'gvisor'];

/** GET/POST/DELETE on the engine API; resolves {status, body (parsed when JSON)}. */
const engine = (method, p) => engineRequest(SOCKET, method, p);

const labelFilter = (label) => encodeURIComponent(JSON.stringify({ label: [label] }));

/** Containers carrying mcpcell's supervisor label, optionally for one supervisor pid. */
async function mcpcellContainers(pid) {
  const label = pid === undefined ? 'io.mcpcell.supervisor' : `io.mcpcell.supervisor=${pid}`;
  const r = await engine('GET', `/containers/json?all=1&filters=${labelFilter(label)}`);
  assert.equal(r.status, 200, `engine list failed: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Skips (plain e2e runs) or fails loudly (MCPCELL_E2E_BACKEND=docker) when there is no engine. */
async function needEngine(t) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  let r;
  try {
    r = await engine('GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200, `engine /_ping answered ${r.status}`);
  return true;
}

/** `mcpcell run --isolate=LEVEL <node cell args> <extra> -- <command>` as an argv. */
function argv(level, extra, command) {
  return ['run', `--isolate=${level}`, ...nodeCellArgs(), ...extra, '--', ...command];
}

/** An SDK client whose server is mcpcell running `command` in a `level` cell. */
function startServer(t, level, extra, command) {
  assertBinaryExists();
  // The SDK refuses lines over 10 MiB by default; server-filesystem sends a
  // 10 MiB file twice (content and structuredContent) in one line.
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN, args: argv(level, extra, command), env: {}, stderr: 'pipe', maxBufferSize: 64 * 1024 * 1024,
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'mcpcell-e2e-docker', version: '0.0.0' }, { capabilities: {} });
  t.after(async () => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    client,
    transport,
    stderr: () => stderr,
    async connect() {
      try {
        await client.connect(transport);
      } catch (e) {
        assert.fail(`connect through a ${level} cell failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
      }
    },
  };
}

/** Waits until `fn()` is truthy (polling the engine: its state is not ours to be told about). */
async function eventually(fn, what, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

for (const level of LEVELS) {
  test(`${level}: server-everything lists and calls tools; nothing is left afterwards`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const s = startServer(t, level, [], [NODE_BIN, serverEntry('server-everything')]);
    await s.connect();
    assert.equal(s.client.getServerVersion()?.name, 'mcp-servers/everything');
    const { tools } = await s.client.listTools();
    assert.ok(tools.some((x) => x.name === 'echo'), `tools/list: ${tools.map((x) => x.name).join(', ')}`);
    const echo = await s.client.callTool({ name: 'echo', arguments: { message: `hello from a ${level} cell` } });
    assert.equal(resultText(echo), `Echo: hello from a ${level} cell`);
    const pid = s.transport.pid;
    assert.equal((await mcpcellContainers(pid)).length, 1, 'exactly one container while the server runs');
    assert.ok(watcherOf(pid) > 0, 'no container watcher runs for the supervisor');
    await s.client.close();
    await eventually(async () => (await mcpcellContainers(pid)).length === 0, 'the container to be removed');
    // Dismissed by a normal end: it leaves, having done nothing.
    await eventually(() => watcherOf(pid) === 0, 'the dismissed watcher to exit');
  });

  test(`${level}: server-filesystem reads, writes, and returns a 10 MiB file intact`, { timeout: 120_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const readDir = makeTempDir(`${level}-read`);
    const writeDir = makeWritableDir(`${level}-write`);
    // 10 MiB + a bit of text with multi-byte characters: one JSON-RPC line of more than 10 MiB.
    const big = ('0123456789abcdef'.repeat(64) + 'ü€\n').repeat(10 * 1024 + 3);
    writeReadableFile(path.join(readDir, 'big.txt'), big);
    writeReadableFile(path.join(readDir, 'small.txt'), 'alpha');
    const s = startServer(t, level, ['--read', readDir, '--write', writeDir],
      [NODE_BIN, serverEntry('server-filesystem'), readDir, writeDir]);
    await s.connect();
    const small = await s.client.callTool({ name: 'read_text_file', arguments: { path: path.join(readDir, 'small.txt') } });
    assert.equal(resultText(small), 'alpha');
    const w = await s.client.callTool({ name: 'write_file', arguments: { path: path.join(writeDir, 'out.txt'), content: 'written in a container' } });
    assert.equal(w.isError, undefined, resultText(w));
    assert.equal(readFileSync(path.join(writeDir, 'out.txt'), 'utf8'), 'written in a container');
    const denied = await s.client.callTool({ name: 'write_file', arguments: { path: path.join(readDir, 'nope.txt'), content: 'x' } });
    assert.equal(denied.isError, true, 'a --read dir must be read-only in the container');
    const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: path.join(readDir, 'big.txt') } });
    const text = resultText(r);
    assert.ok(Buffer.byteLength(text) > 10 * 1024 * 1024, `got only ${Buffer.byteLength(text)} bytes`);
    assert.ok(text === big, 'the 10 MiB result differs from the file');
    await s.client.close();
  });

  test(`${level}: stdio is binary-safe, stderr stays apart, the exit status comes back`, { timeout: 60_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const data = randomBytes(12 * 1024 * 1024);
    const r = await new Promise((resolve, reject) => {
      // Bytes, not messages: the relay (on by default) is off for this copy.
      const child = spawn(MCPCELL_BIN, argv(level, ['--relay=off'], ['/bin/sh', '-c', 'cat; echo to-stderr >&2; exit 7']));
      const out = [];
      let err = '';
      child.stdout.on('data', (d) => out.push(d));
      child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out: Buffer.concat(out), err }));
      child.stdin.end(data);
    });
    assert.equal(r.code, 7, r.err);
    assert.equal(r.out.length, data.length);
    assert.ok(r.out.equals(data), 'bytes changed on the way through the container');
    assert.match(r.err, /to-stderr/);
    assert.doesNotMatch(r.out.subarray(-64).toString('latin1'), /to-stderr/);
  });

  test(`${level}: docker inspect shows the hardening and no secret value; the secret is a file`, { timeout: 60_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const dir = makeTempDir(`${level}-secret`);
    const value = `s3cr3t-${randomBytes(8).toString('hex')}`;
    const file = path.join(dir, 'token');
    writeFileSync(file, value);
    chmodSync(file, 0o600);
    // The server prints what it sees (a JSON object, no JSON-RPC message: the
    // relay would drop it, so --relay=off), then waits for stdin to close.
    const script = [
      'const fs=require("fs");',
      'const out={secret:fs.readFileSync("/run/secrets/api","utf8"), env:JSON.stringify(process.env), uid:process.getuid()};',
      'try{fs.writeFileSync("/root-write","x");out.rootWritable=true}catch(e){out.rootWritable=false}',
      'try{fs.writeFileSync("/run/secrets/api","x");out.secretWritable=true}catch(e){out.secretWritable=false}',
      'console.log(JSON.stringify(out)); process.stdin.resume();',
    ].join('');
    // gVisor's pids cgroup holds its sandbox's threads: it refuses less than 256.
    const pids = level === 'gvisor' ? 256 : 128;
    const child = spawn(MCPCELL_BIN, argv(level, ['--relay=off', '--secret', `api=${file}`, '--memory', '256m', '--pids', String(pids), '--cpus', '0.5'],
      [NODE_BIN, '-e', script]), { stdio: ['pipe', 'pipe', 'pipe'] });
    t.after(() => child.exitCode === null && child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const exited = new Promise((resolve) => child.on('close', resolve));
    await eventually(() => out.includes('\n') || child.exitCode !== null, 'the server to report');
    const seen = JSON.parse(out.split('\n')[0] || 'null');
    assert.ok(seen, `no report; stderr: ${err}`);
    assert.equal(seen.secret, value, 'the secret file holds the value');
    assert.equal(seen.env.includes(value), false, 'the secret must not be in the environment');
    assert.ok(isCellHostId(seen.uid), `the cell runs as a host uid of its own, not ${seen.uid}`);
    assert.equal(seen.rootWritable, false, 'root filesystem must be read-only');
    assert.equal(seen.secretWritable, false, '/run/secrets must be read-only');

    const [c] = await mcpcellContainers(child.pid);
    assert.ok(c, 'container not found by its supervisor label');
    const { body: info } = await engine('GET', `/containers/${c.Id}/json`);
    const h = info.HostConfig;
    assert.equal(h.ReadonlyRootfs, true);
    assert.deepEqual(h.CapDrop, ['ALL']);
    assert.ok((h.CapAdd ?? []).length === 0);
    assert.ok(h.SecurityOpt.includes('no-new-privileges:true'), JSON.stringify(h.SecurityOpt));
    assert.equal(h.Privileged, false);
    assert.equal(h.NetworkMode, 'none');
    assert.equal(h.Init, true);
    assert.equal(h.Memory, 256 * 1024 * 1024);
    assert.equal(h.PidsLimit, pids);
    assert.ok(h.SecurityOpt.some((o) => o.startsWith('seccomp=') && o.includes('"ptrace"')), 'mcpcell\'s seccomp profile is not applied');
    assert.equal(h.NanoCpus, 500_000_000);
    assert.match(h.Tmpfs['/tmp'], /noexec/);
    assert.match(h.Tmpfs['/tmp'], /size=\d+/);
    assert.equal(info.Config.User, `${seen.uid}:${seen.uid}`);
    assert.equal(info.Config.Labels['io.mcpcell.supervisor'], String(child.pid));
    assert.match(info.Name, /^\/mcpcell-[0-9a-f]+$/);
    if (level === 'gvisor') assert.equal(h.Runtime, 'runsc');
    for (const m of info.Mounts) {
      if (m.Type === 'bind') assert.equal(m.RW, false, `bind ${m.Destination} must be read-only`);
    }
    assert.equal(JSON.stringify(info).includes(value), false, 'docker inspect shows the secret value');

    child.stdin.end();
    assert.equal(await exited, 0, err);
    assert.equal((await mcpcellContainers(child.pid)).length, 0, 'container left after exit');
  });
}

test('docker: SIGTERM to mcpcell stops the container and removes it', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const child = spawn(MCPCELL_BIN, argv('docker', ['--grace', '1s'], ['/bin/sh', '-c', 'echo up; exec sleep 600']));
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  await eventually(() => out.includes('up'), 'the server to start');
  child.kill('SIGTERM');
  const code = await exited;
  assert.ok(code === 128 + 15 || code === 128 + 9, `exit ${code}: the server should die of SIGTERM (or SIGKILL after the grace)`);
  assert.equal((await mcpcellContainers(child.pid)).length, 0);
});

test('docker: --timeout stops the server with exit 124', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const r = await runMcpcell(argv('docker', ['--timeout', '2s', '--grace', '1s'], ['/bin/sleep', '600']), { input: undefined });
  assert.equal(r.code, EXIT.timeout, r.stderr);
  assert.match(r.stderr, /timeout/);
  assert.equal((await mcpcellContainers(r.pid)).length, 0);
});

test('docker: stdin EOF reaches the server (MCP shutdown order)', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  // wc only prints once its stdin is closed: proves the half-close crossed the engine.
  const r = await runMcpcell(argv('docker', [], ['/usr/bin/wc', '-c']), { input: 'x'.repeat(12345) });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '12345');
});

test('docker: a missing command is exit 127 with the reason', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const r = await runMcpcell(argv('docker', [], ['/nonexistent/server']));
  assert.equal(r.code, EXIT.notFound, r.stderr);
  assert.match(r.stderr, /not found|no such file/i);
});

/** The lock file of the cell id claim of the run's container (src/cell/cell_ids.h). */
async function claimFileOf(pid) {
  const [c] = await mcpcellContainers(pid);
  const { body: info } = await engine('GET', `/containers/${c.Id}/json`);
  const uid = Number(info.Config.User.split(':')[0]);
  assert.ok(isCellHostId(uid), `container User ${info.Config.User}`);
  // A normal user's: $XDG_RUNTIME_DIR/mcpcell-ids when set, else ~/.local/state (cell_ids.cc).
  const dir = process.getuid() === 0 ? '/run/mcpcell/cell-ids'
    : process.env.XDG_RUNTIME_DIR ? path.join(process.env.XDG_RUNTIME_DIR, 'mcpcell-ids')
      : path.join(process.env.XDG_STATE_HOME ?? path.join(process.env.HOME, '.local', 'state'), 'mcpcell', 'cell-ids');
  return path.join(dir, String(uid));
}

/** The run's per-run entries in /dev/shm (FIFOs, secrets, egress dir, seccomp profile file). */
const shmEntriesOf = (pid) => readdirSync('/dev/shm').filter((n) => new RegExp(`^mcpcell-[a-z]+-${pid}-`).test(n));

/** Starts `sh -c 'echo up; exec sleep 600'` in a `level` cell with a secret; resolves once it printed. */
async function startSleeper(t, level, extra = []) {
  const dir = makeTempDir(`${level}-kill9`);
  const secret = path.join(dir, 'token');
  writeFileSync(secret, 'kill9-secret');
  const pids = level === 'gvisor' ? ['--pids', '256'] : [];
  const child = spawn(MCPCELL_BIN, argv(level, ['--secret', `api=${secret}`, ...pids, ...extra],
    ['/bin/sh', '-c', 'echo up; exec sleep 600']));
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  await eventually(() => out.includes('up') || child.exitCode !== null, 'the server to start');
  assert.ok(out.includes('up'), `the server did not start: ${err}`);
  return { child, exited, stderr: () => err };
}

for (const level of LEVELS) {
  test(`${level}: kill -9 of mcpcell: its watcher removes the container and the run's /dev/shm entries, no gc`, { timeout: 60_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const { child, exited } = await startSleeper(t, level);
    const watcher = watcherOf(child.pid);
    assert.ok(watcher > 0, 'no mcpcell-watcher holds a pidfd of the supervisor');
    assert.equal((await mcpcellContainers(child.pid)).length, 1);
    assert.ok(shmEntriesOf(child.pid).length >= (level === 'gvisor' ? 1 : 2), `entries: ${shmEntriesOf(child.pid)}`);
    const claim = await claimFileOf(child.pid);
    assert.ok(existsSync(claim), `the run's uid claim ${claim}`);
    child.kill('SIGKILL');
    await exited;
    // Bounded waits for the watcher's work, no gc in between.
    await eventually(async () => (await mcpcellContainers(child.pid)).length === 0, 'the watcher to remove the container');
    await eventually(() => shmEntriesOf(child.pid).length === 0, `the watcher to remove ${shmEntriesOf(child.pid)}`);
    await eventually(() => watcherOf(child.pid) === 0, 'the watcher to exit');
    assert.equal(existsSync(claim), false, `the watcher left the uid claim ${claim} of the removed container`);
  });
}

test('docker: kill -9 of mcpcell and of its watcher leaves a container that `mcpcell gc` removes', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const { child, exited } = await startSleeper(t, 'docker');
  const watcher = watcherOf(child.pid);
  assert.ok(watcher > 0, 'no mcpcell-watcher holds a pidfd of the supervisor');
  const claim = await claimFileOf(child.pid);
  process.kill(watcher, 'SIGKILL');
  await eventually(() => watcherOf(child.pid) === 0, 'the watcher to die');
  child.kill('SIGKILL');
  await exited;
  const orphans = await mcpcellContainers(child.pid);
  assert.equal(orphans.length, 1, 'the control: with no watcher, kill -9 leaves the container');
  assert.ok(shmEntriesOf(child.pid).some((n) => n.startsWith(`mcpcell-stdio-${child.pid}-`)),
    'the control: kill -9 leaves the FIFO directory of the run');
  const gc = await runMcpcell(['gc']);
  assert.equal(gc.code, 0, gc.stderr);
  assert.match(gc.stderr, /removed orphaned container mcpcell-/);
  assert.equal((await mcpcellContainers(child.pid)).length, 0, 'gc left the orphan');
  const leftovers = shmEntriesOf(child.pid).filter((n) => /^mcpcell-(stdio|secrets)-/.test(n));
  assert.deepEqual(leftovers, [], 'gc left the dead run\'s FIFO/secrets directory in /dev/shm');
  assert.equal(existsSync(claim), false, `gc left the dead run's uid claim ${claim}`);
  assert.match(gc.stderr, /cell id claims \(.*\): [1-9]\d* checked, [1-9]\d* removed/);
});

/** The normal user in the docker group the e2e-docker step also runs as (scripts/docker.sh). */
const DOCKER_USER = process.env.MCPCELL_DOCKER_TEST_USER ?? 'mcpcell-docker';

/** Runs `cmd args` as uid:gid `id` with no supplementary groups; resolves {code, stderr}. */
function runAs(id, cmd, args) {
  const r = spawnSync('setpriv', ['--reuid', String(id), '--regid', String(id), '--clear-groups', '--', cmd, ...args],
    { encoding: 'utf8', timeout: 10_000 });
  return { code: r.status, stderr: r.stderr };
}

for (const level of LEVELS) {
  test(`${level}, run by a docker-group user: the cell reads its FIFOs and secret; other host users, the cell's uid among them, cannot`, { timeout: 60_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    if (process.getuid() !== 0) {
      t.skip('switches between host users: runs in the root pass (the docker-group pass runs every other test as that user)');
      return;
    }
    const user = spawnSync('id', ['-u', DOCKER_USER], { encoding: 'utf8' });
    if (user.status !== 0) assert.fail(`no user ${DOCKER_USER}: scripts/docker.sh creates it (in group docker)`);
    const uid = Number(user.stdout.trim());
    const dir = makeTempDir(`${level}-hand-over`);
    const value = `handed-${randomBytes(6).toString('hex')}`;
    const secret = path.join(dir, 'token');
    writeReadableFile(secret, value);
    const pids = level === 'gvisor' ? ['--pids', '256'] : [];
    const child = spawn('runuser', ['-u', DOCKER_USER, '--', 'env', '-i', 'PATH=/usr/bin:/bin', MCPCELL_BIN,
      ...argv(level, ['--secret', `api=${secret}`, ...pids], ['/bin/sh', '-c', 'cat /run/secrets/api; echo; echo up; exec cat >/dev/null'])]);
    t.after(() => child.exitCode === null && child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const exited = new Promise((resolve) => child.on('close', resolve));
    await eventually(() => out.includes('up') || child.exitCode !== null, 'the cell to start');
    assert.equal(out, `${value}\nup\n`, `the cell must read its secret; stderr: ${err}`);
    const ours = readdirSync('/dev/shm').filter((n) => /^mcpcell-(stdio|secrets)-/.test(n))
      .map((n) => path.join('/dev/shm', n)).filter((p) => statSync(p).uid === uid);
    const secretCopies = ours.filter((p) => p.includes('mcpcell-secrets-')).map((p) => path.join(p, 's', 'api'));
    const fifos = ours.filter((p) => p.includes('mcpcell-stdio-')).map((p) => path.join(p, 'd', 'in'));
    assert.equal(secretCopies.length, 1, `secret copies of ${DOCKER_USER}: ${ours}`);
    assert.equal(fifos.length, level === 'gvisor' ? 0 : 1, `FIFO dirs of ${DOCKER_USER}: ${ours}`);
    assert.equal(runAs(uid, 'cat', secretCopies).code, 0, 'control: the caller reads its own copy');
    const others = { [spawnSync('id', ['-u', 'mcpcell-test'], { encoding: 'utf8' }).stdout.trim() || '1001']: 'another user', 1000: 'a real host user (uid 1000)' };
    for (const [id, who] of Object.entries(others)) {
      for (const p of secretCopies) {
        const r = runAs(id, 'cat', [p]);
        assert.notEqual(r.code, 0, `${who} (uid ${id}) read the secret copy ${p}`);
        assert.match(r.stderr, /Permission denied/);
      }
      for (const p of fifos) {
        const r = runAs(id, 'sh', ['-c', ': <>"$1"', 'sh', p]);
        assert.notEqual(r.code, 0, `${who} (uid ${id}) opened the stdin FIFO ${p}`);
        assert.match(r.stderr, /Permission denied/);
      }
    }
    child.stdin.end();
    assert.equal(await exited, 0, err);
  });
}

test('fallback: engine down → refuse by default (122), native cell with --fallback=native', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const env = { ...process.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock' };
  const probe = ['/bin/sh', '-c', 'test -e /.dockerenv && echo container || echo not-container'];
  for (const level of ['docker', 'gvisor']) {
    const refused = await runMcpcell(argv(level, [], probe), { env });
    assert.equal(refused.code, EXIT.isolationUnavailable, refused.stderr);
    assert.match(refused.stderr, /nonexistent\/docker\.sock/);
    assert.match(refused.stderr, /--fallback=native/);
    assert.equal(refused.stdout, '', 'nothing may run when the fallback is none');
    const fell = await runMcpcell(argv(level, ['--fallback=native'], probe), { env });
    assert.equal(fell.code, 0, fell.stderr);
    assert.equal(fell.stdout.trim(), 'not-container');
    assert.match(fell.stderr, /falling back to a native cell/);
  }
  // Control: with the engine up, the same probe runs in a container.
  const up = await runMcpcell(argv('docker', ['--fallback=native'], probe));
  assert.equal(up.stdout.trim(), 'container', up.stderr);
});

test('docker: stdin already closed at start still reaches the server as EOF (no SIGTERM needed)', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  // Regression: closing our end of the stdin FIFO before the cell opened its
  // end left the cell's open() waiting for a writer forever; the run then
  // ended only by the grace-period SIGTERM (exit 143) instead of 0.
  for (let i = 0; i < 5; i += 1) {
    const r = await runMcpcell(argv('docker', ['--grace', '30s'], ['/usr/bin/wc', '-c']), { input: '' });
    assert.equal(r.code, 0, `run ${i}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), '0');
  }
});
