// Podman cells: the same container backend through Podman's Docker-compatible
// API service (scripts/docker.sh ensure_podman: `podman --runtime runc system
// service`), with the real npm servers and the SDK client, the hardening as
// Podman's inspect shows it, a docker:// image from Podman's own store, and
// cleanup after a normal exit and after kill -9 (`mcpcell gc`).
//
// Run by scripts/test.sh's e2e-docker step when podman is installed
// (MCPCELL_E2E_BACKEND=docker: a service that does not answer FAILS every
// test); plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { isCellHostId } from './lib/host.mjs';
import { EXIT, assertBinaryExists, resultText, runMcpcell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN, nodeCellArgs, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';
import { engineRequest, watcherOf } from './lib/engine.mjs';

after(removeTempDirs);

const SOCKET = (process.env.CONTAINER_HOST ?? 'unix:///run/podman/podman.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const IMAGE = 'mcpcell-test/podman-everything:1';
const IMAGE_NO_SH = 'mcpcell-test/podman-everything-nosh:1';
const EVERYTHING = '/app/node_modules/@modelcontextprotocol/server-everything/dist/index.js';

const engine = (method, p) => engineRequest(SOCKET, method, p);

async function cells(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  const r = await engine('GET', `/containers/json?all=1&filters=${filters}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

async function needPodman(t) {
  if (!ENABLED) {
    t.skip('podman cells: set MCPCELL_E2E_BACKEND=docker with the podman service up (scripts/test.sh e2e-docker step)');
    return false;
  }
  if (process.getuid() !== 0 && !process.env.CONTAINER_HOST) {
    // A normal user's podman is rootless, its own service under $XDG_RUNTIME_DIR; the test step starts root's only.
    t.skip(`podman cells here use root's podman service (${SOCKET}), which uid ${process.getuid()} may not use`);
    return false;
  }
  let r;
  try {
    r = await engine('GET', '/_ping');
  } catch (e) {
    assert.fail(`no Podman service answers on ${SOCKET}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200);
  return true;
}

async function eventually(fn, what, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function client(t, args) {
  assertBinaryExists();
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN, args, env: {}, stderr: 'pipe', maxBufferSize: 64 * 1024 * 1024,
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const c = new Client({ name: 'mcpcell-e2e-podman', version: '0.0.0' }, { capabilities: {} });
  t.after(() => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    c,
    transport,
    stderr: () => stderr,
    async connect() {
      try {
        await c.connect(transport);
      } catch (e) {
        assert.fail(`connect through a podman cell failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
      }
    },
  };
}

const podmanArgs = (extra, command) => ['run', '--isolate=podman', ...nodeCellArgs(), ...extra, '--', ...command];

test('podman: server-everything lists and calls tools; the container is removed afterwards', { timeout: 90_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const s = client(t, podmanArgs([], [NODE_BIN, serverEntry('server-everything')]));
  await s.connect();
  assert.equal(s.c.getServerVersion()?.name, 'mcp-servers/everything');
  const { tools } = await s.c.listTools();
  assert.ok(tools.some((x) => x.name === 'echo'));
  const echo = await s.c.callTool({ name: 'echo', arguments: { message: 'from a podman cell' } });
  assert.equal(resultText(echo), 'Echo: from a podman cell');
  const pid = s.transport.pid;
  const [cell] = await cells(pid);
  assert.ok(cell, 'no podman container carries the supervisor label');
  const { body: info } = await engine('GET', `/containers/${cell.Id}/json`);
  const h = info.HostConfig;
  assert.equal(h.ReadonlyRootfs, true);
  assert.ok(h.CapDrop.length > 0 && (h.CapAdd ?? []).length === 0, `caps: drop ${h.CapDrop} add ${h.CapAdd}`);
  assert.ok(h.SecurityOpt.some((o) => o.includes('no-new-privileges')), JSON.stringify(h.SecurityOpt));
  assert.equal(h.NetworkMode, 'none');
  assert.match(info.Config.User, /^\d+:\d+$/);
  assert.ok(isCellHostId(Number(info.Config.User.split(':')[0])), `podman cell user ${info.Config.User}`);
  assert.ok(h.Ulimits.some((u) => /nproc$/i.test(u.Name) && u.Hard === 512), JSON.stringify(h.Ulimits));
  await s.c.close();
  await eventually(async () => (await cells(pid)).length === 0, 'the podman container to be removed');
});

test('podman: server-filesystem writes, refuses a --read dir, returns a 10 MiB file intact', { timeout: 120_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const readDir = makeTempDir('podman-read');
  const writeDir = makeWritableDir('podman-write');
  const big = ('0123456789abcdef'.repeat(64) + 'ü€\n').repeat(10 * 1024 + 3);
  writeReadableFile(path.join(readDir, 'big.txt'), big);
  const s = client(t, podmanArgs(['--read', readDir, '--write', writeDir],
    [NODE_BIN, serverEntry('server-filesystem'), readDir, writeDir]));
  await s.connect();
  const w = await s.c.callTool({ name: 'write_file', arguments: { path: path.join(writeDir, 'out.txt'), content: 'podman' } });
  assert.equal(w.isError, undefined, resultText(w));
  assert.equal(readFileSync(path.join(writeDir, 'out.txt'), 'utf8'), 'podman');
  const denied = await s.c.callTool({ name: 'write_file', arguments: { path: path.join(readDir, 'x.txt'), content: 'x' } });
  assert.equal(denied.isError, true, 'a --read dir must be read-only');
  const r = await s.c.callTool({ name: 'read_text_file', arguments: { path: path.join(readDir, 'big.txt') } });
  assert.ok(resultText(r) === big, 'the 10 MiB result differs from the file');
  await s.c.close();
});

test('podman: exit status, stderr apart from stdout, stdin EOF', { timeout: 60_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const r = await runMcpcell(podmanArgs([], ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']));
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, 'out\n');
  assert.match(r.stderr, /^err$/m);
  const wc = await runMcpcell(podmanArgs([], ['/usr/bin/wc', '-c']), { input: 'y'.repeat(54321) });
  assert.equal(wc.stdout.trim(), '54321', wc.stderr);
  const missing = await runMcpcell(podmanArgs([], ['/nonexistent/server']));
  assert.equal(missing.code, EXIT.notFound, missing.stderr);
});

/** `podman import` of node + node_modules (+ /bin/sh when `withShell`), unless the image is there. */
async function podmanImage(tag, withShell, changes) {
  if ((await engine('GET', `/images/${tag}/json`)).status === 200) return;
  const ldd = spawnSync('ldd', withShell ? ['/usr/bin/node', '/bin/sh'] : ['/usr/bin/node'], { encoding: 'utf8' });
  const libs = [...ldd.stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1].replace(/^\//, ''));
  const files = [...new Set(['usr/bin/node', ...(withShell ? ['bin/sh'] : []), ...libs])];
  const script = 'tar -C / -c --dereference "$@" -C "$E2E" --transform "s,^node_modules,app/node_modules," node_modules' +
    ` | podman import ${changes.map((c) => `--change '${c}'`).join(' ')} - ${tag}`;
  const b = spawnSync('bash', ['-c', script, 'build', ...files], { env: { ...process.env, E2E: E2E_DIR }, encoding: 'utf8' });
  assert.equal(b.status, 0, `podman import: ${b.stderr}`);
}

test('podman: a docker:// image from Podman\'s own store (podman import), run as its own host uid, not the image USER', { timeout: 120_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  await podmanImage(IMAGE, true, ['ENTRYPOINT ["/usr/bin/node"]', `CMD ["${EVERYTHING}"]`, 'USER 2000', 'WORKDIR /app']);
  // A JSON object that is no JSON-RPC message: the relay (on by default) would drop it.
  const probe = await runMcpcell(['run', '--relay=off', '--isolate=podman', `docker://${IMAGE}`, '--', '-e',
    'console.log(JSON.stringify({uid:process.getuid(),cwd:process.cwd()}))']);
  assert.equal(probe.code, 0, probe.stderr);
  const seen = JSON.parse(probe.stdout);
  assert.equal(seen.cwd, '/app');
  assert.ok(isCellHostId(seen.uid), `the image says USER 2000; the cell runs as its own host uid, not ${seen.uid}`);
  assert.match(probe.stderr, /the image's USER '2000' is not used/);
  const s = client(t, ['run', '--isolate=podman', `docker://${IMAGE}`]);
  await s.connect();
  const echo = await s.c.callTool({ name: 'echo', arguments: { message: 'image in podman' } });
  assert.equal(resultText(echo), 'Echo: image in podman');
  await s.c.close();
});

test('podman: an image without /bin/sh keeps stdio on the attach stream (stdin included) and works', { timeout: 120_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  await podmanImage(IMAGE_NO_SH, false, ['ENTRYPOINT ["/usr/bin/node"]', `CMD ["${EVERYTHING}"]`]);
  const s = client(t, ['run', '--isolate=podman', `docker://${IMAGE_NO_SH}`]);
  await s.connect();
  const echo = await s.c.callTool({ name: 'echo', arguments: { message: 'attach in podman' } });
  assert.equal(resultText(echo), 'Echo: attach in podman');
  assert.match(s.stderr(), /no \/bin\/sh/);
  await s.c.close();
});

test('podman: kill -9 of mcpcell: its watcher removes the container without gc', { timeout: 60_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const child = spawn(MCPCELL_BIN, podmanArgs([], ['/bin/sh', '-c', 'echo up; exec sleep 600']));
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  await eventually(() => out.includes('up') || child.exitCode !== null, 'the server to start');
  assert.ok(out.includes('up'), `the server did not start: ${err}`);
  assert.ok(watcherOf(child.pid) > 0, 'no mcpcell-watcher holds a pidfd of the supervisor');
  assert.equal((await cells(child.pid)).length, 1);
  child.kill('SIGKILL');
  await exited;
  await eventually(async () => (await cells(child.pid)).length === 0, 'the watcher to remove the podman container');
  await eventually(() => readdirSync('/dev/shm').every((n) => !n.includes(`-${child.pid}-`) || !n.startsWith('mcpcell-')),
    'the watcher to remove the run\'s /dev/shm entries');
  await eventually(() => watcherOf(child.pid) === 0, 'the watcher to exit');
});

test('podman: without its container init (catatonit moved away) a podman cell is refused: 122, the package named; doctor says so', { timeout: 60_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const init = '/usr/libexec/podman/catatonit';
  assert.ok(existsSync(init), `${init} is missing: scripts/docker.sh installs catatonit`);
  const aside = `${init}.mcpcell-test-${process.pid}`;
  renameSync(init, aside);
  try {
    const r = await runMcpcell(podmanArgs([], ['/bin/true']));
    assert.equal(r.code, EXIT.isolationUnavailable, r.stderr);
    assert.match(r.stderr, /catatonit/);
    assert.match(r.stderr, /apt-get install catatonit/);
    assert.equal((await cells(r.pid)).length, 0, 'nothing may be created');
    const d = await runMcpcell(['doctor']);
    assert.match(d.stdout + d.stderr, /podman init\s+missing\s+\/usr\/libexec\/podman\/catatonit/);
    assert.match(d.stdout + d.stderr, /fix: apt-get install catatonit/);
  } finally {
    renameSync(aside, init);
  }
  // And back: the same cell runs.
  const ok = await runMcpcell(podmanArgs([], ['/bin/true']));
  assert.equal(ok.code, 0, ok.stderr);
});

// Issue 18 item 13: a docker:// image a user loaded into docker is not in
// podman's store; the failed pull says so and how to copy it.
test('podman: an image it cannot pull names its own store and `docker save | podman load`', { timeout: 60_000 }, async (t) => {
  if (!(await needPodman(t))) return;
  const r = await runMcpcell(['run', '--isolate=podman', 'docker://registry.invalid/mcpcell/none:1']);
  assert.equal(r.code, EXIT.setupFailed, r.stderr);
  assert.match(r.stderr, /podman has its own image store/);
  assert.match(r.stderr, /docker save registry\.invalid\/mcpcell\/none:1 \| podman load/);
  assert.equal(r.stdout, '');
});
