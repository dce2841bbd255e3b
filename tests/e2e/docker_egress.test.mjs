// Network egress (issue 5) in CONTAINER cells: the user story of
// egress.test.mjs in docker (and podman) cells. The container gets no network
// of the engine's; mcpcell joins its network namespace from outside, sets up
// the same redirect + DNS stub as a native cell, serves it with its egress
// proxy, and only then lets the server start (src/cell/docker/container_net.h).
//
//   - the fetch server on Node's built-in fetch (ignores proxy variables:
//     DNS stub + redirect) and the proxy-aware one (HTTP_PROXY: forwarding
//     and CONNECT) reach wiki.acmecorp.com / acmecorp.atlassian.net and
//     nothing else; every attempt is on the audit log with the rule;
//   - bypass attempts (egress_probe): a direct connect to the host's own IP,
//     the metadata address, IPv6, UDP, raw DNS to an outside resolver;
//   - a docker:// image cell with /bin/sh gets the same; one without is refused;
//   - gVisor (runsc has its own network stack) and a caller without
//     CAP_SYS_ADMIN are refused with exit 122 and what to use instead.
//
// Needs root and a running engine: scripts/test.sh's e2e-docker step starts
// dockerd (scripts/docker.sh) and runs this file with MCPCELL_E2E_BACKEND=docker,
// where a missing engine FAILS. Plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
  CELL_PROXY_PORT, FETCH_BUILTIN, FETCH_PROXY_AWARE, PROBE_BIN, SYNTHETIC, assertProbeExists, attempt, auditEvents,
  denialLines, egressEvents, fetchResult, hostAddresses, probeReports, startStorySites, startUdpListener, writeProfile,
} from './lib/egress.mjs';
import { EXIT, assertBinaryExists, runMcpcell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';
import { engineRequest, ensureNodeImage, watcherOf } from './lib/engine.mjs';

after(removeTempDirs);

const DOCKER_SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const PODMAN_SOCKET = process.env.CONTAINER_HOST?.replace(/^unix:\/\//, '') ?? '/run/podman/podman.sock';
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
/** An image with node and /bin/sh only (built here: nothing can be pulled on the test machine). */
const NODE_IMAGE = 'mcpcell-test/egress-node:1';

const engine = engineRequest;

/** Skips (plain e2e runs) or fails loudly (MCPCELL_E2E_BACKEND=docker) when the level's engine is missing. */
async function needEngine(t, level, { asRootOnly = true } = {}) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  if (process.getuid() !== 0 && asRootOnly) {
    // The docker-group pass (scripts/docker.sh): what a normal user gets instead is the refusal test below.
    t.skip(`container allow-lists need root today (mcpcell setns()s into the container's network namespace, which needs CAP_SYS_ADMIN); running as uid ${process.getuid()}`);
    return false;
  }
  if (process.getuid() !== 0 && level === 'podman') {
    t.skip(`podman cells here use root's podman service (${PODMAN_SOCKET}); running as uid ${process.getuid()}`);
    return false;
  }
  const socket = level === 'podman' ? PODMAN_SOCKET : DOCKER_SOCKET;
  if (level === 'podman' && spawnSync('sh', ['-c', 'command -v podman']).status !== 0) {
    t.skip('podman is not installed (scripts/test.sh runs podman cells only where it is)');
    return false;
  }
  let r;
  try {
    r = await engine(socket, 'GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no ${level} engine answers on ${socket}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200, `${level} /_ping answered ${r.status}`);
  return true;
}

/** Containers a given mcpcell left behind (should be none once it exited). */
async function leftContainers(pid, socket = DOCKER_SOCKET) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  const r = await engine(socket, 'GET', `/containers/json?all=1&filters=${filters}`);
  assert.equal(r.status, 200);
  return r.body;
}

/** The allow-list flags of the story: profile, audit log, --resolve pins. `=` keeps a SERVER after them positional. */
function storyFlags(sites, dir) {
  const profile = writeProfile(dir, sites.outbound);
  const audit = path.join(dir, 'audit.jsonl');
  return { audit, flags: [`--permission-profile=${profile}`, `--audit-log=${audit}`, ...sites.resolve.map((r) => `--resolve=${r}`)] };
}

/** An SDK client on `mcpcell <args>`; returns {c, connect(), fetch(url, extra), stderr(), exited}. */
function fetchClient(t, args) {
  assertBinaryExists();
  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args, env: {}, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const c = new Client({ name: 'mcpcell-e2e-docker-egress', version: '0.0.0' }, { capabilities: {} });
  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const started = start();
    const child = transport._process; // the SDK forgets it on close()
    child.on('exit', (code, signal) => resolveExit({ code, signal, pid: child.pid }));
    return started;
  };
  t.after(() => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    c,
    exited,
    stderr: () => stderr,
    async connect() {
      try {
        await c.connect(transport);
      } catch (e) {
        assert.fail(`the fetch server did not start in an allow-list container cell (${e.message}); stderr:\n${stderr}`);
      }
    },
    fetch: async (url, extra = {}) =>
      fetchResult(await c.callTool({ name: 'fetch_url', arguments: { url, ...extra } }, undefined, { timeout: 60_000 })),
  };
}

/** Closes the client; mcpcell must exit 0 and leave no container (attempts are audited when they end). */
async function finish(s, socket = DOCKER_SOCKET) {
  await s.c.close();
  const exit = await s.exited;
  assert.equal(exit.code, 0, `mcpcell exit ${exit.code} signal ${exit.signal}; stderr:\n${s.stderr()}`);
  assert.deepEqual(await leftContainers(exit.pid, socket), [], 'a container outlived its run');
}

const hostDenial = (host) => new RegExp(`no allow_host entry matches "${host.replace(/\./g, '\\.')}"`);

/** The one launch event (container backend) and its server name. */
function launchOf(audit, backend) {
  const launch = auditEvents(audit).filter((e) => e.event === 'launch');
  assert.equal(launch.length, 1, JSON.stringify(auditEvents(audit)));
  // The container's fields, merged in by the cell (the event's own "backend"
  // comes from the plan: a command's spec says native whatever the level).
  assert.match(launch[0].container ?? '', /^mcpcell-/, `not a ${backend} cell: ${JSON.stringify(launch[0])}`);
  assert.equal(launch[0].engine, backend === 'podman' ? PODMAN_SOCKET : DOCKER_SOCKET);
  assert.equal(launch[0].stdio, 'fifo', 'an allow-list container cell runs through the gated FIFO wrapper');
  return launch[0];
}

function assertAllowed(e, { server, via, host, port, rule }) {
  assert.equal(e.server, server);
  assert.equal(e.via, via);
  assert.equal(e.host, host);
  assert.equal(e.port, port);
  assert.equal(e.allowed, true, JSON.stringify(e));
  assert.equal(e.address, '127.0.0.1');
  assert.ok(e.rule.startsWith(rule), `rule ${JSON.stringify(e.rule)} does not start with ${JSON.stringify(rule)}`);
  assert.match(e.rule, /--resolve pin/);
  assert.ok(e.bytes_out > 0 && e.bytes_in > 0, JSON.stringify(e));
  assert.ok(Number.isInteger(e.duration_ms), JSON.stringify(e));
}

function assertDenied(e, { server, via, host, port, rule }) {
  assert.equal(e.server, server);
  assert.equal(e.via, via);
  assert.equal(e.host, host);
  assert.equal(e.port, port);
  assert.equal(e.allowed, false, JSON.stringify(e));
  assert.match(e.rule, rule);
  assert.equal(e.address, '');
  assert.equal(e.bytes_in, 0);
  assert.match(e.how_to_allow ?? '', /network\.outbound\.allow_(host|port)/);
}

/**
 * The built-in-fetch half of the story in a container cell `args` (ending in
 * the server): allowed names reached through the redirect path, evil.example
 * not even resolved, a port outside allow_port refused; audit checked.
 */
async function builtinFetchStory(t, { args, sites, audit, backend }) {
  const s = fetchClient(t, args);
  await s.connect();
  const wiki = await s.fetch(`http://wiki.acmecorp.com:${sites.wiki.port}/page?id=1`);
  assert.equal(wiki.ok, true, `allowed fetch failed: ${JSON.stringify(wiki)}; stderr:\n${s.stderr()}`);
  assert.match(wiki.body, new RegExp(sites.wiki.token));
  const atl = await s.fetch(`http://acmecorp.atlassian.net:${sites.atlassian.port}/`);
  assert.equal(atl.ok, true, JSON.stringify(atl));
  assert.match(atl.body, new RegExp(sites.atlassian.token));
  const evil = await s.fetch(`http://evil.example:${sites.evil.port}/steal`);
  assert.equal(evil.ok, false, `evil.example was fetched: ${JSON.stringify(evil)}`);
  assert.match(evil.error, /ENOTFOUND|EAI_NONAME|getaddrinfo/, JSON.stringify(evil));
  const badPort = await s.fetch(`http://wiki.acmecorp.com:${sites.otherPort.port}/`);
  assert.equal(badPort.ok, false, JSON.stringify(badPort));
  // The host's own address, as an IP literal: redirected to the proxy, which
  // has no rule for it (Node's fetch ignores proxies, so this is the kernel's redirect at work).
  const { v4 } = hostAddresses();
  const direct = v4 ? await s.fetch(`http://${v4}:${sites.wiki.port}/direct`) : null;
  if (direct) assert.equal(direct.ok, false, `a direct connect to ${v4} got through: ${JSON.stringify(direct)}`);
  await finish(s, backend === 'podman' ? PODMAN_SOCKET : DOCKER_SOCKET);
  const stderr = s.stderr();

  await t.test('the upstreams saw exactly the allowed requests', () => {
    assert.deepEqual(sites.wiki.requests.map((r) => r.url), ['/page?id=1']);
    assert.equal(sites.atlassian.requests.length, 1);
    assert.deepEqual(sites.evil.contacts, []);
    assert.deepEqual(sites.otherPort.contacts, []);
  });
  const { server } = launchOf(audit, backend);
  await t.test('audit: allowed connections via the redirect path, field by field', () => {
    const w = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.wiki.port });
    assert.equal(w.length, 1, JSON.stringify(egressEvents(audit)));
    assertAllowed(w[0], { server, via: 'redirect', host: 'wiki.acmecorp.com', port: sites.wiki.port,
      rule: `allow_host ".acmecorp.com" + allow_port ${sites.wiki.port}` });
    const a = egressEvents(audit, { host: 'acmecorp.atlassian.net', port: sites.atlassian.port });
    assert.equal(a.length, 1, JSON.stringify(a));
    assertAllowed(a[0], { server, via: 'redirect', host: 'acmecorp.atlassian.net', port: sites.atlassian.port,
      rule: `allow_host "acmecorp.atlassian.net" + allow_port ${sites.atlassian.port}` });
    for (const e of egressEvents(audit, { via: 'dns', allowed: true })) {
      if (e.address) assert.match(e.address, SYNTHETIC, JSON.stringify(e));
    }
  });
  await t.test('audit: evil.example denied at the DNS stub, the port outside allow_port at the proxy', () => {
    const ev = egressEvents(audit, { host: 'evil.example' });
    assert.ok(ev.length >= 1, JSON.stringify(egressEvents(audit)));
    for (const e of ev) assertDenied(e, { server, via: 'dns', host: 'evil.example', port: 0, rule: hostDenial('evil.example') });
    const p = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.otherPort.port });
    assert.equal(p.length, 1, JSON.stringify(p));
    assertDenied(p[0], { server, via: 'redirect', host: 'wiki.acmecorp.com', port: sites.otherPort.port,
      rule: new RegExp(`port ${sites.otherPort.port} is not in allow_port`) });
  });
  await t.test('audit: the direct connect to the host\'s own address denied by the proxy', (st) => {
    if (!v4) return st.skip('this host has no non-loopback IPv4 address');
    const d = egressEvents(audit, { host: v4, port: sites.wiki.port });
    assert.equal(d.length, 1, JSON.stringify(egressEvents(audit)));
    assertDenied(d[0], { server, via: 'redirect', host: v4, port: sites.wiki.port, rule: hostDenial(v4) });
    assert.ok(!sites.wiki.requests.some((r) => r.url === '/direct'), 'the direct request reached the upstream');
  });
  await t.test('stderr: the denial sentence, once per host', () => {
    const lines = denialLines(stderr, 'evil.example');
    assert.equal(lines.length, 1, `stderr:\n${stderr}`);
    assert.match(lines[0], /add "evil\.example" to network\.outbound\.allow_host/);
  });
}

before(() => {
  if (!ENABLED) return;
  // node and /bin/sh with their libraries (--dereference: symlinks become files).
  const r = ensureNodeImage(NODE_IMAGE, NODE_BIN);
  assert.equal(r.status, 0, `building ${NODE_IMAGE}: ${r.stderr}`);
});

for (const level of ['docker', 'podman']) {
  test(`${level} cell, built-in fetch: the user story through the redirect path, all audited`, { timeout: 120_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const sites = await startStorySites();
    t.after(() => sites.close());
    const { audit, flags } = storyFlags(sites, makeTempDir('docker-egress'));
    const args = ['run', `--isolate=${level}`, ...nodeCellArgs(), ...flags, '--', NODE_BIN, FETCH_BUILTIN];
    await builtinFetchStory(t, { args, sites, audit, backend: level });
  });
}

test('docker cell, proxy-aware fetch: the proxy variables reach the container; forwarding and CONNECT to the allowed host only, 403s that explain', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const { audit, flags } = storyFlags(sites, makeTempDir('docker-egress'));
  const s = fetchClient(t, ['run', '--isolate=docker', ...nodeCellArgs(), ...flags, '--', NODE_BIN, FETCH_PROXY_AWARE]);
  await s.connect();
  const wikiHost = `wiki.acmecorp.com:${sites.wiki.port}`;
  const fwd = await s.fetch(`http://${wikiHost}/fwd`);
  assert.equal(fwd.via, 'forward', `the server did not see HTTP_PROXY in the container: ${JSON.stringify(fwd)}; stderr:\n${s.stderr()}`);
  assert.equal(fwd.status, 200);
  assert.match(fwd.body, new RegExp(sites.wiki.token));
  const tun = await s.fetch(`http://${wikiHost}/tunnel`, { mode: 'connect' });
  assert.equal(tun.via, 'connect', JSON.stringify(tun));
  assert.match(tun.body, new RegExp(sites.wiki.token));
  const evil = await s.fetch(`http://evil.example:${sites.evil.port}/fwd`);
  assert.equal(evil.status, 403, JSON.stringify(evil));
  assert.match(evil.body, hostDenial('evil.example'));
  assert.match(evil.body, /network\.outbound\.allow_host/);
  await finish(s);
  assert.deepEqual(sites.evil.contacts, [], 'evil.example was reached');
  const { server } = launchOf(audit, 'docker');
  const events = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.wiki.port });
  assert.deepEqual(events.map((e) => e.via).sort(), ['connect', 'http'], JSON.stringify(events));
  for (const e of events) {
    assertAllowed(e, { server, via: e.via, host: 'wiki.acmecorp.com', port: sites.wiki.port,
      rule: `allow_host ".acmecorp.com" + allow_port ${sites.wiki.port}` });
  }
  const denied = egressEvents(audit, { host: 'evil.example' });
  assert.equal(denied.length, 1, JSON.stringify(denied));
  assertDenied(denied[0], { server, via: 'http', host: 'evil.example', port: sites.evil.port, rule: hostDenial('evil.example') });
});

test('docker cell, bypass attempts (egress_probe): direct IPs, metadata, IPv6, UDP and raw DNS go nowhere, and are audited', { timeout: 180_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  assertProbeExists();
  const sites = await startStorySites();
  const udp = await startUdpListener(sites.secret);
  t.after(async () => {
    udp.close();
    await sites.close();
  });
  const { audit, flags } = storyFlags(sites, makeTempDir('docker-egress'));
  const { v4, v6 } = hostAddresses();
  const config = {
    secret: sites.secret, host_addr: v4, host_addr6: v6, upstream_port: sites.wiki.port,
    denied_port: sites.otherPort.port, udp_port: udp.port, allowed_name: 'wiki.acmecorp.com',
    denied_name: 'evil.example', denied_name_port: sites.evil.port, proxy_port: CELL_PROXY_PORT,
    attempts: ['control_connect_allowed', 'control_redirect_allowed', 'tcp_host_addr', 'tcp_metadata',
      'tcp_private_10', 'tcp6_documentation', 'tcp_host_loopback', 'udp_host', 'dns_outside_denied'],
  };
  // The probe reports JSON lines that are no JSON-RPC messages: the relay (on by default) would drop them.
  const run = await runMcpcell(['run', '--isolate=docker', '--relay=off', ...flags, '--', PROBE_BIN, JSON.stringify(config)],
    { guardMs: 170_000 });
  const probe = probeReports(run);
  const a = (name) => attempt(probe, name);
  await t.test('mcpcell and the probe ran to the end (exit 0)', () => {
    assert.equal(run.code, 0, `exit ${run.code}; stderr:\n${run.stderr}`);
  });
  await t.test('controls: CONNECT and a direct connect to the allowed name reach it', () => {
    assert.equal(a('control_connect_allowed').reached, true, JSON.stringify(a('control_connect_allowed')));
    assert.equal(a('control_redirect_allowed').reached, true, JSON.stringify(a('control_redirect_allowed')));
  });
  await t.test('direct connect to the host\'s IPv4 address: denied at the proxy, audited', (st) => {
    if (!v4) return st.skip('this host has no non-loopback IPv4 address');
    assert.equal(a('tcp_host_addr').reached, false, JSON.stringify(a('tcp_host_addr')));
    const ev = egressEvents(audit, { via: 'redirect', host: v4, port: sites.wiki.port });
    assert.ok(ev.length >= 1 && ev.every((e) => e.allowed === false), JSON.stringify(egressEvents(audit)));
  });
  await t.test('metadata 169.254.169.254 and 10.0.0.1: denied, audited', () => {
    assert.equal(a('tcp_metadata').reached, false);
    assert.equal(a('tcp_private_10').reached, false);
    assert.ok(egressEvents(audit, { host: '169.254.169.254', port: 80, allowed: false }).length >= 1);
    assert.ok(egressEvents(audit, { host: '10.0.0.1', allowed: false }).length >= 1);
  });
  await t.test('IPv6: no route; 127.0.0.1 is the container\'s own loopback', () => {
    const r6 = a('tcp6_documentation');
    assert.equal(r6.ok, false, JSON.stringify(r6));
    assert.match(r6.errno ?? '', /^(ENETUNREACH|EHOSTUNREACH|EADDRNOTAVAIL|EACCES|EPERM)$/, JSON.stringify(r6));
    assert.equal(a('tcp_host_loopback').errno, 'ECONNREFUSED', JSON.stringify(a('tcp_host_loopback')));
  });
  await t.test('UDP to the host: nothing heard', (st) => {
    if (!v4) return st.skip('this host has no non-loopback IPv4 address');
    assert.equal(a('udp_host').reached, false);
    assert.deepEqual(udp.contacts, []);
  });
  await t.test('raw DNS to 8.8.8.8 lands on the stub: NXDOMAIN for a denied name, audited', () => {
    const r = a('dns_outside_denied');
    assert.equal(r.rcode, 3, JSON.stringify(r));
    assert.ok(egressEvents(audit, { via: 'dns', host: 'evil.example', allowed: false }).length >= 1);
  });
});

test('docker:// image with /bin/sh: the same allow-list (built-in fetch, redirect path)', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const { audit, flags } = storyFlags(sites, makeTempDir('docker-egress'));
  // The image's Entrypoint is node; the fetch server and its node_modules are bound read-only.
  const args = ['run', '--isolate=docker', `docker://${NODE_IMAGE}`, `--read=${E2E_DIR}`, ...flags, '--', FETCH_BUILTIN];
  await builtinFetchStory(t, { args, sites, audit, backend: 'docker' });
});

test('docker:// image without /bin/sh: an allow-list is refused (exit 122), never run with the network unmediated', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  // mcpcell's own base image is empty: no /bin/sh.
  const r = await runMcpcell(['run', '--isolate=docker', 'docker://mcpcell-base:1', '--allow-host=example.com', '--', '/x'],
    { input: '' });
  assert.equal(r.code, EXIT.isolationUnavailable, r.stderr);
  assert.match(r.stderr, /network allow-list .*needs the cell's \/bin\/sh/);
  assert.deepEqual(await leftContainers(r.pid), []);
});

test('gVisor: an allow-list is refused with exit 122, saying why and what to use instead', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t, 'docker', { asRootOnly: false }))) return;
  const r = await runMcpcell(['run', '--isolate=gvisor', ...nodeCellArgs(), '--allow-host=example.com', '--', NODE_BIN, '-e', '0'],
    { input: '' });
  assert.equal(r.code, EXIT.isolationUnavailable, r.stderr);
  assert.match(r.stderr, /a gVisor cell cannot have a network allow-list/);
  assert.match(r.stderr, /netstack/);
  assert.match(r.stderr, /--isolate=docker or --isolate=native/);
  assert.deepEqual(await leftContainers(r.pid), []);
});

test('without CAP_SYS_ADMIN (not root): an allow-list in a container cell is refused with exit 122 saying so', { timeout: 60_000 }, async (t) => {
  if (!(await needEngine(t, 'docker', { asRootOnly: false }))) return;
  if (spawnSync('sh', ['-c', 'command -v setpriv']).status !== 0) return t.skip('setpriv (util-linux) is not installed');
  // Root with CAP_SYS_ADMIN out of the bounding set: it can still use the
  // docker socket, but cannot join the container's network namespace. A
  // normal user (the docker-group pass) has no CAP_SYS_ADMIN to drop.
  const drop = process.getuid() === 0 ? ['setpriv', '--bounding-set=-sys_admin', '--inh-caps=-sys_admin'] : [];
  const cmd = [...drop, MCPCELL_BIN, 'run', '--isolate=docker', ...nodeCellArgs(), '--allow-host=example.com', '--', NODE_BIN, '-e', '0'];
  const out = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', input: '', timeout: 60_000 });
  assert.equal(out.status, EXIT.isolationUnavailable, out.stderr);
  assert.match(out.stderr, /run mcpcell as root/);
  assert.match(out.stderr, /--isolate=native/);
});

test('docker cell, mcpcell killed with -9: the orphaned container has no network at all (fails closed)', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const { audit, flags } = storyFlags(sites, makeTempDir('docker-egress'));
  let child;
  const running = runMcpcell(['run', '--isolate=docker', ...nodeCellArgs(), ...flags, '--', NODE_BIN, '-e',
    'setInterval(() => {}, 1000)'], { onSpawn: (c) => (child = c) });
  // The launch event is written after the proxy serves the container and the gate opened.
  for (let i = 0; i < 600 && !auditEvents(audit).some((e) => e.event === 'launch'); i++) await sleep(100);
  const launch = auditEvents(audit).find((e) => e.event === 'launch');
  assert.ok(launch, 'no launch event within 60 s');
  const cid = launch.container_id;
  t.after(() => engine(DOCKER_SOCKET, 'DELETE', `/containers/${cid}?force=1&v=1`));
  // Node's built-in fetch from a second process in the container (same
  // network namespace). Not spawnSync: the upstream answers on this event loop.
  const probe = () => new Promise((resolve) => execFile('docker', ['exec', cid, NODE_BIN, '-e',
    `fetch('http://wiki.acmecorp.com:${sites.wiki.port}/exec').then((r) => r.text()).then(` +
    `(t) => console.log('REACHED ' + t), (e) => console.log('FAILED ' + (e.cause?.code ?? e.message)))`],
  { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => resolve({ stdout, stderr: `${stderr}${error ?? ''}` })));
  const before = await probe();
  assert.match(before.stdout, new RegExp(`REACHED .*${sites.wiki.token}`), `control failed: ${before.stdout}${before.stderr}`);
  // The container watcher would remove the container moments after the
  // kill (container_watcher.h); to see what an orphan can reach, it goes first.
  const watcher = watcherOf(child.pid);
  assert.ok(watcher > 0, 'no container watcher for the supervisor');
  process.kill(watcher, 'SIGKILL');
  child.kill('SIGKILL');
  const run = await running;
  assert.equal(run.signal, 'SIGKILL');
  const afterKill = await probe();
  assert.match(afterKill.stdout, /^FAILED (ENOTFOUND|EAI_AGAIN|ECONNREFUSED)/, `${afterKill.stdout}${afterKill.stderr}`);
  assert.equal(sites.wiki.requests.filter((r) => r.url === '/exec').length, 1, 'the orphan reached the upstream');

  // `mcpcell gc` removes the orphan and its egress directory (gate, resolv.conf).
  const egressDirs = () => readdirSync('/dev/shm').filter((n) => n.startsWith(`mcpcell-net-${run.pid}-`));
  assert.equal(egressDirs().length, 1, 'the run had no egress directory on /dev/shm');
  const gc = await runMcpcell(['gc'], { input: '' });
  assert.equal(gc.code, 0, gc.stderr);
  assert.deepEqual(egressDirs(), []);
  assert.deepEqual(await leftContainers(run.pid), []);
});

// The host's loopback, port by port (issue 14 item 3), in a container cell:
// the same nft redirect is set up from outside (container_net.h), so
// 127.0.0.1:PORT in the container reaches the host's 127.0.0.1:PORT for the
// named port only. Native cells: egress_host_loopback.test.mjs.
test('docker cell: --allow-host localhost:PORT reaches the host\'s 127.0.0.1:PORT, no other port, audited', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  const secret = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const net = await import('node:net');
  const services = [];
  for (const label of ['db', 'other']) {
    const token = `${secret}-${label}`;
    const contacts = [];
    const server = net.createServer((sock) => {
      contacts.push(sock.remoteAddress);
      sock.on('error', () => {});
      sock.end(`${token}\n`);
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    services.push({ label, token, contacts, port: server.address().port, server });
  }
  t.after(() => services.forEach((s) => s.server.close()));
  const [db, other] = services;
  const audit = path.join(makeTempDir('docker-host-loopback'), 'audit.jsonl');
  const cases = [
    { name: 'direct_127', via: 'direct', host: '127.0.0.1', port: db.port },
    { name: 'direct_localhost', via: 'direct', host: 'localhost', port: db.port },
    { name: 'direct_other', via: 'direct', host: '127.0.0.1', port: other.port },
    { name: 'direct_127_0_0_2', via: 'direct', host: '127.0.0.2', port: db.port },
    { name: 'socks5_other', via: 'socks5', host: '127.0.0.1', port: other.port, atyp: 'ipv4' },
    { name: 'socks5_mapped', via: 'socks5', host: '::ffff:127.0.0.1', port: db.port, atyp: 'ipv6' },
    { name: 'connect_other', via: 'connect', host: 'localhost', port: other.port },
  ];
  const probeScript = path.join(E2E_DIR, 'servers', 'loopback_probe.mjs');
  const r = await runMcpcell(['run', '--isolate=docker', '--relay=off', ...nodeCellArgs(), `--read=${E2E_DIR}`,
    `--allow-host=localhost:${db.port}`, `--audit-log=${audit}`, '--', NODE_BIN, probeScript,
    JSON.stringify({ proxy_port: CELL_PROXY_PORT, cases })], { guardMs: 110_000 });
  assert.equal(r.code, 0, `exit ${r.code}; stderr:\n${r.stderr}`);
  const got = new Map(r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).map((x) => [x.name, x]));
  const get = (name) => {
    assert.ok(got.has(name), `no line for ${name}; stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    return got.get(name);
  };
  for (const name of ['direct_127', 'direct_localhost']) {
    assert.ok((get(name).reply ?? '').includes(db.token), `${name}: ${JSON.stringify(get(name))}`);
  }
  for (const name of ['direct_other', 'direct_127_0_0_2', 'socks5_other', 'socks5_mapped', 'connect_other']) {
    const x = get(name);
    assert.equal(x.ok, false, `${name} connected: ${JSON.stringify(x)}`);
    assert.ok(!(x.reply ?? '').includes(secret), `${name} REACHED a host service: ${JSON.stringify(x)}`);
  }
  assert.deepEqual(other.contacts, [], 'the unnamed port was reached');
  const allowed = egressEvents(audit, { host: '127.0.0.1', port: db.port, allowed: true });
  assert.ok(allowed.length >= 1, JSON.stringify(egressEvents(audit)));
  assert.match(allowed[0].rule, /the host's loopback/);
  assert.deepEqual(await leftContainers(r.pid), []);
});
