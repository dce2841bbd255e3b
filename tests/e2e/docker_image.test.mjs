// docker:// images as sources, through a real dockerd. Nothing can be pulled
// on the test machine, so the images are built here: `docker import` of a root
// filesystem holding node (with its libraries), the e2e node_modules at
// /app/node_modules and, in one of the two, /bin/sh. The image's Entrypoint
// (/usr/bin/node), Cmd (server-everything), Env, WorkingDir and User are set
// with --change, exactly what an image from a registry carries.
//
// Run by scripts/test.sh's e2e-docker step (MCPCELL_E2E_BACKEND=docker, which
// makes a missing engine a failure); plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { isCellHostId } from './lib/host.mjs';
import { EXIT, assertBinaryExists, resultText, runMcpcell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_MODULES } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';
import { engineRequest } from './lib/engine.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const WITH_SH = 'mcpcell-test/everything:2';
const NO_SH = 'mcpcell-test/everything-nosh:2';
const EVERYTHING = '/app/node_modules/@modelcontextprotocol/server-everything/dist/index.js';

const engine = (method, p) => engineRequest(SOCKET, method, p);

async function mcpcellContainers(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  const r = await engine('GET', `/containers/json?all=1&filters=${filters}`);
  assert.equal(r.status, 200);
  return r.body;
}

async function needEngine(t) {
  if (!ENABLED) {
    t.skip('docker:// images: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  let r;
  try {
    r = await engine('GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200);
  return true;
}

/** The files node needs: the binary and what ldd says it loads. */
function nodeFiles() {
  const ldd = spawnSync('ldd', ['/usr/bin/node'], { encoding: 'utf8' });
  assert.equal(ldd.status, 0, `ldd /usr/bin/node: ${ldd.stderr}`);
  const libs = [...ldd.stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]);
  return ['/usr/bin/node', ...libs];
}

/** `docker import`s a root filesystem with node, node_modules at /app, and /bin/sh when `withShell`. */
function buildImage(tag, withShell, changes) {
  const files = nodeFiles();
  if (withShell) files.push('/bin/sh', ...[...spawnSync('ldd', ['/bin/sh'], { encoding: 'utf8' }).stdout
    .matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]));
  const rel = [...new Set(files)].map((f) => f.replace(/^\//, ''));
  const changeArgs = changes.flatMap((c) => ['--change', c]);
  // --dereference: symlinks (/bin/sh → dash, /lib64/ld-linux…) become the files themselves.
  const script = 'tar -C / -c --dereference "$@" -C "$E2E" --transform "s,^node_modules,app/node_modules," node_modules' +
    ' | docker import ' + changeArgs.map((c) => `'${c}'`).join(' ') + ` - ${tag}`;
  const r = spawnSync('bash', ['-c', script, 'build', ...rel], { env: { ...process.env, E2E: E2E_DIR }, encoding: 'utf8' });
  assert.equal(r.status, 0, `building ${tag}: ${r.stderr}`);
}

async function ensureImages() {
  if ((await engine('GET', `/images/${WITH_SH}/json`)).status !== 200) {
    buildImage(WITH_SH, true, ['ENTRYPOINT ["/usr/bin/node"]', `CMD ["${EVERYTHING}"]`, 'USER 2000',
      'WORKDIR /app', 'ENV FROM_IMAGE=yes PATH=/app/bin:/usr/bin']);
  }
  if ((await engine('GET', `/images/${NO_SH}/json`)).status !== 200) {
    // No USER: the image would run as root; mcpcell must not.
    buildImage(NO_SH, false, ['ENTRYPOINT ["/usr/bin/node"]', `CMD ["${EVERYTHING}"]`]);
  }
}

before(async () => {
  if (ENABLED) await ensureImages();
});

function client(t, args) {
  assertBinaryExists();
  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args, env: {}, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const c = new Client({ name: 'mcpcell-e2e-image', version: '0.0.0' }, { capabilities: {} });
  t.after(() => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { c, transport, stderr: () => stderr };
}

/** What the image's node sees: cwd, uid/gid, a few env vars, whether / is writable. */
const PROBE = 'const fs=require("fs");let w=true;try{fs.writeFileSync("/x","x")}catch{w=false}' +
  'console.log(JSON.stringify({cwd:process.cwd(),uid:process.getuid(),gid:process.getgid(),' +
  'from:process.env.FROM_IMAGE,path:process.env.PATH,home:process.env.HOME,rootWritable:w,' +
  'usr:fs.readdirSync("/usr"),hasSh:fs.existsSync("/bin/sh")}))';
// The probe prints a JSON object that is no JSON-RPC message: the relay (on by
// default in every cell) would drop it, so these runs copy bytes.
const PROBE_RUN = ['--relay=off'];

for (const [image, stdio] of [[WITH_SH, 'fifo'], [NO_SH, 'attach']]) {
  test(`docker://${image}: server-everything from the image's own Entrypoint/Cmd, stdio via ${stdio}`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const audit = path.join(makeTempDir('image-audit'), 'audit.jsonl');
    const s = client(t, ['run', '--isolate=docker', '--audit-log', audit, `docker://${image}`]);
    try {
      await s.c.connect(s.transport);
    } catch (e) {
      assert.fail(`connect: ${e.message}\n${s.stderr()}`);
    }
    assert.equal(s.c.getServerVersion()?.name, 'mcp-servers/everything');
    const echo = await s.c.callTool({ name: 'echo', arguments: { message: 'from an image' } });
    assert.equal(resultText(echo), 'Echo: from an image');
    const pid = s.transport.pid;
    const [cell] = await mcpcellContainers(pid);
    assert.ok(cell, 'no container carries the supervisor label');
    const { body: info } = await engine('GET', `/containers/${cell.Id}/json`);
    const { body: img } = await engine('GET', `/images/${image}/json`);
    assert.equal(info.Image, img.Id, 'the container runs exactly the inspected image');
    assert.equal(info.HostConfig.ReadonlyRootfs, true);
    assert.deepEqual(info.HostConfig.CapDrop, ['ALL']);
    assert.equal(info.HostConfig.NetworkMode, 'none');
    assert.notEqual(info.Config.User.split(':')[0], '0', 'never root');
    const binds = info.Mounts.filter((m) => m.Type === 'bind').map((m) => m.Source);
    for (const host of ['/usr', '/lib', '/lib64', '/bin', '/etc/ld.so.cache']) {
      assert.ok(!binds.includes(host), `host ${host} must not be mounted into an image cell: ${binds}`);
    }
    await s.c.close();
    const events = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const launch = events.find((e) => e.event === 'launch' || e.type === 'launch');
    assert.ok(launch, `no launch event: ${JSON.stringify(events)}`);
    assert.equal(launch.stdio, stdio, s.stderr());
    assert.equal(launch.image, image);
    if (stdio === 'attach') assert.match(s.stderr(), /no \/bin\/sh/);
  });
}

test('docker://: args after -- replace Cmd; image Env/WorkingDir apply; the image USER is noted, the cell runs as its own host uid', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const withSh = await runMcpcell(['run', ...PROBE_RUN, `docker://${WITH_SH}`, '--env', 'EXTRA=1', '--', '-e', PROBE]);
  assert.equal(withSh.code, 0, withSh.stderr);
  const a = JSON.parse(withSh.stdout);
  assert.equal(a.cwd, '/app');
  assert.ok(isCellHostId(a.uid), `the image says USER 2000, a host uid others may have; the cell runs as ${a.uid}`);
  assert.equal(a.gid, a.uid);
  assert.match(withSh.stderr, /the image's USER '2000' is not used/);
  assert.equal(a.from, 'yes');
  assert.equal(a.path, '/app/bin:/usr/bin', "the image's PATH, not the host's");
  assert.equal(a.home, '/home/mcp');
  assert.equal(a.rootWritable, false);
  assert.deepEqual(a.usr, ['bin'], "the image's /usr, not the host's");
  assert.equal(a.hasSh, true);

  const noSh = await runMcpcell(['run', ...PROBE_RUN, `docker://${NO_SH}`, '--', '-e', PROBE]);
  assert.equal(noSh.code, 0, noSh.stderr);
  const b = JSON.parse(noSh.stdout);
  assert.ok(isCellHostId(b.uid), `an image without USER would be root: mcpcell runs it as its own uid, not ${b.uid}`);
  assert.equal(b.cwd, '/');
  assert.equal(b.hasSh, false);

  // Root may name any uid; a docker-group caller only its own (adv23: the
  // engine, as root, would run the server as whoever it names).
  const want = process.getuid() === 0 ? 3000 : process.getuid();
  const uid = await runMcpcell(['run', ...PROBE_RUN, '--uid', String(want), `docker://${WITH_SH}`, '--', '-e', PROBE]);
  assert.equal(uid.code, 0, uid.stderr);
  assert.equal(JSON.parse(uid.stdout).uid, want, '--uid wins over the image');
  if (process.getuid() !== 0) {
    const other = await runMcpcell(['run', ...PROBE_RUN, '--uid', '3000', `docker://${WITH_SH}`, '--', '-e', PROBE]);
    assert.equal(other.code, 2, `a docker-group caller named another uid: ${other.stderr}`);
    assert.match(other.stderr, /--uid 3000: a container cell of a caller that is not root runs as the caller's own uid/);
  }
});

/** WITH_SH plus an /etc/passwd and /etc/group, committed with `USER user` (a small layer on top). */
function namedUserImage(tag, user) {
  const dir = makeTempDir('image-passwd');
  writeFileSync(path.join(dir, 'passwd'), 'root:x:0:0:root:/root:/bin/sh\napp:x:2100:2200::/app:/bin/false\ntoor:x:0:0::/:/bin/sh\n');
  writeFileSync(path.join(dir, 'group'), 'root:x:0:\napp:x:2200:\nstaff:x:50:\n');
  const script = `set -e; c=$(docker create ${WITH_SH}); trap 'docker rm -f "$c" >/dev/null' EXIT
    docker cp "$D/passwd" "$c:/etc/passwd"; docker cp "$D/group" "$c:/etc/group"
    docker commit --change 'USER ${user}' "$c" ${tag} >/dev/null`;
  const r = spawnSync('bash', ['-c', script], { env: { ...process.env, D: dir }, encoding: 'utf8' });
  assert.equal(r.status, 0, `building ${tag}: ${r.stderr}`);
}

test('docker://: a named USER (a user, root by another name, a missing one) is noted, not used: the cell runs as its own host uid', { timeout: 90_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  for (const user of ['app', 'app:staff', 'toor', 'ghost']) {
    const tag = `mcpcell-test/named-user:${user.replace(':', '-')}`;
    namedUserImage(tag, user);
    const r = await runMcpcell(['run', ...PROBE_RUN, `docker://${tag}`, '--', '-e', PROBE]);
    assert.equal(r.code, 0, r.stderr);
    const seen = JSON.parse(r.stdout);
    assert.ok(isCellHostId(seen.uid), `USER ${user}: ran as ${seen.uid}; ${r.stderr}`);
    assert.equal(seen.gid, seen.uid, `USER ${user}`);
    assert.ok(r.stderr.includes(`the image's USER '${user}' is not used`), r.stderr);
    assert.equal((await mcpcellContainers(r.pid)).length, 0, 'no container may be left');
  }
});

test('docker://: an image VOLUME is a tmpfs in the cell, not an engine volume on disk', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const tag = 'mcpcell-test/with-volume:1';
  const script = `set -e; c=$(docker create ${WITH_SH}); trap 'docker rm -f "$c" >/dev/null' EXIT
    docker commit --change 'VOLUME /data' "$c" ${tag} >/dev/null`;
  const b = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  assert.equal(b.status, 0, b.stderr);
  const child = spawn(MCPCELL_BIN, ['run', `docker://${tag}`, '--', '-e',
    'const fs=require("fs");fs.writeFileSync("/data/x","y");' +
    'console.log(fs.readFileSync("/proc/self/mounts","utf8").split("\\n").find((l)=>l.split(" ")[1]==="/data"));' +
    'process.stdin.resume()']);
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  for (let i = 0; i < 200 && !out.includes('\n') && child.exitCode === null; i++) await sleep(100);
  assert.match(out, /^tmpfs \/data tmpfs /, `the mount at /data: ${out}\n${err}`);
  const [cell] = await mcpcellContainers(child.pid);
  assert.ok(cell, err);
  const { body: info } = await engine('GET', `/containers/${cell.Id}/json`);
  assert.deepEqual(info.Mounts.filter((m) => m.Type === 'volume'), [], 'no engine volume may back an image VOLUME');
  child.stdin.end();
  assert.equal(await exited, 0, err);
});

test('docker://: --read binds a host directory into the image, read-only', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const dir = makeTempDir('image-read');
  const r = await runMcpcell(['run', `docker://${WITH_SH}`, '--read', `${dir}:/data`, '--', '-e',
    'const fs=require("fs");let w=true;try{fs.writeFileSync("/data/x","x")}catch{w=false};console.log(fs.existsSync("/data"),w)']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'true false');
});

test('docker://: a digest pin runs the image with that Id and refuses another', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const { body: img } = await engine('GET', `/images/${WITH_SH}/json`);
  const ok = await runMcpcell(['run', `docker://${WITH_SH}@${img.Id}`, '--', '-e', 'console.log("pinned")']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), 'pinned');
  const wrong = `sha256:${'e'.repeat(64)}`;
  const bad = await runMcpcell(['run', `docker://${WITH_SH}@${wrong}`, '--', '-e', 'console.log("RAN")']);
  assert.equal(bad.code, EXIT.setupFailed, bad.stderr);
  assert.equal(bad.stdout, '', 'nothing may run from a mismatching image');
  assert.match(bad.stderr, new RegExp(`is ${img.Id}, not the pinned ${wrong}`));
  assert.match(bad.stderr, /refusing to run it/);
  // The mismatch is known locally (the image was loaded here, never pulled):
  // no registry pull is started before the refusal.
  assert.doesNotMatch(bad.stderr, /pulling/, 'a pull was started for a mismatch known locally');
  assert.equal((await mcpcellContainers(bad.pid)).length, 0);
});

test('docker://: a missing image whose registry is unreachable is a clear error, not a hang', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const r = await runMcpcell(['run', 'docker://registry.invalid/mcpcell/none:1']);
  assert.equal(r.code, EXIT.setupFailed, r.stderr);
  assert.match(r.stderr, /not in the engine; pulling it/);
  assert.match(r.stderr, /pull image registry\.invalid\/mcpcell\/none:1: .*registry\.invalid/);
  assert.match(r.stderr, /docker load|docker import/);
  assert.equal(r.stdout, '');
});

test('docker://: native cannot run an image (122); an image with no command asks for one', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const native = await runMcpcell(['run', '--isolate=native', `docker://${WITH_SH}`]);
  assert.equal(native.code, EXIT.isolationUnavailable, native.stderr);
  assert.match(native.stderr, /only in a container cell/);
  // mcpcell's own base image: empty, no Entrypoint or Cmd.
  const empty = await runMcpcell(['run', 'docker://mcpcell-base:1']);
  assert.equal(empty.code, EXIT.setupFailed, empty.stderr);
  assert.match(empty.stderr, /no Entrypoint or Cmd/);
});

test('gvisor: docker:// image runs under runsc (attach stdio)', { timeout: 90_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const r = await runMcpcell(['run', ...PROBE_RUN, '--isolate=gvisor', `docker://${WITH_SH}`, '--', '-e', PROBE]);
  assert.equal(r.code, 0, r.stderr);
  const { uid } = JSON.parse(r.stdout);
  assert.ok(isCellHostId(uid), `runsc runs the image as the claimed host uid, not its USER 2000: ${uid}`);
});

test('docker://: SIGTERM to mcpcell removes the image cell', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const child = spawn(MCPCELL_BIN, ['run', '--grace', '1s', `docker://${WITH_SH}`, '--', '-e',
    'console.log("up"); setInterval(() => {}, 1000)']);
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  for (let i = 0; i < 200 && !out.includes('up'); i++) await sleep(100);
  assert.ok(out.includes('up'), 'the server did not start');
  child.kill('SIGTERM');
  await exited;
  assert.equal((await mcpcellContainers(child.pid)).length, 0);
});
