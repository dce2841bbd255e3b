// The host side of the egress tests: upstream HTTP servers standing for named
// sites (each answers with its own token and records every request and every
// TCP contact), a UDP listener, the host's own addresses, profiles, the audit
// log, and the two programs run in cells (tests/attacks/egress_probe.cc, the
// fetch MCP servers in tests/e2e/servers/).

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { runInCell } from './mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, REPO_DIR } from './paths.mjs';
import { writeReadableFile } from './tmp.mjs';

/** The probe binary: $EGRESS_PROBE_BIN, else next to the mcpcell under test, else <repo>/build/egress_probe. */
export const PROBE_BIN = path.resolve(process.env.EGRESS_PROBE_BIN ??
  [path.join(path.dirname(MCPCELL_BIN), 'egress_probe'), path.join(REPO_DIR, 'build', 'egress_probe')]
    .find((p) => existsSync(p)) ?? path.join(REPO_DIR, 'build', 'egress_probe'));

export function assertProbeExists() {
  if (!existsSync(PROBE_BIN)) {
    throw new Error(`${PROBE_BIN} is missing: build it (cmake --build build --target egress_probe) or set EGRESS_PROBE_BIN`);
  }
}

/** The two fetch MCP servers. */
export const FETCH_BUILTIN = path.join(E2E_DIR, 'servers', 'fetch_builtin.mjs');
export const FETCH_PROXY_AWARE = path.join(E2E_DIR, 'servers', 'fetch_proxy_aware.mjs');

/** The port of the proxy inside a cell (src/egress/egress_service.h). */
export const CELL_PROXY_PORT = 3128;
/** The synthetic range the cell's DNS stub answers allowed names from (src/egress/name_map.h). */
export const SYNTHETIC = /^198\.(18|19)\.\d+\.\d+$/;

/** A random token shared by every upstream of one test; what "reached" means. */
export function newSecret() {
  return `EGRESS-SECRET-${randomBytes(8).toString('hex')}`;
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * An HTTP server standing for one site. It listens on every address of the
 * host (dual stack when IPv6 exists), so a cell that could reach the host's
 * own addresses directly would reach it too. Every TCP contact and every
 * request is recorded; each answer carries `token` = `${secret}-${label}`.
 * Returns { label, port, token, requests: [{method, url, host, remote}],
 * contacts: [remote...], close() }.
 */
export async function startUpstream(label, secret, { tls } = {}) {
  const token = `${secret}-${label}`;
  const requests = [];
  const contacts = [];
  const handler = (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, host: req.headers.host ?? '', remote: req.socket.remoteAddress, body });
      const text = `upstream=${label} token=${token} host=${req.headers.host ?? ''}\n`;
      // /big?n=N: N bytes of body (after the token line), to check the byte counts.
      const n = Number(new URL(req.url, 'http://x').searchParams.get('n') ?? 0);
      const payload = req.url.startsWith('/big') ? text + 'x'.repeat(Math.max(0, n - text.length)) : text;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(payload), connection: 'close' });
      res.end(payload);
    });
  };
  // tls: {key, cert} makes it an HTTPS server (the TLS session then runs end
  // to end between the cell and here: the proxy only sees bytes).
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, handler) : http.createServer(handler);
  server.on('connection', (sock) => contacts.push(sock.remoteAddress));
  try {
    await listen(server, 0, '::');
  } catch {
    await listen(server, 0, '0.0.0.0'); // no IPv6 on this host
  }
  return {
    label,
    token,
    port: server.address().port,
    dualStack: server.address().family === 'IPv6', // listening on :: (so also on ::1)
    requests,
    contacts,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

/** A UDP listener on 0.0.0.0 that answers every datagram with the secret; records contacts. */
export async function startUdpListener(secret) {
  const contacts = [];
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    contacts.push(`${rinfo.address}:${rinfo.port}`);
    sock.send(secret, rinfo.port, rinfo.address);
  });
  await new Promise((resolve) => sock.bind(0, '0.0.0.0', resolve));
  return { port: sock.address().port, contacts, close: () => sock.close() };
}

/** The host's first non-loopback IPv4 and global (not link-local) IPv6 address, '' when none. */
export function hostAddresses() {
  let v4 = '';
  let v6 = '';
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv4' && !v4) v4 = a.address;
      if (a.family === 'IPv6' && !v6 && !a.address.toLowerCase().startsWith('fe80')) v6 = a.address;
    }
  }
  return { v4, v6 };
}

/** Writes a ToolHive permission profile readable by anyone; returns its path. */
export function writeProfile(dir, outbound, name = 'profile.json') {
  const file = path.join(dir, name);
  writeReadableFile(file, JSON.stringify({ network: { outbound } }, null, 2));
  return file;
}

/** The flags of an allow-list run: profile, audit log, --resolve pins ("host:port:addr"). */
export function egressFlags({ profile, audit, resolve = [] }) {
  const flags = ['--permission-profile', profile];
  if (audit) flags.push('--audit-log', audit);
  for (const pin of resolve) flags.push('--resolve', pin);
  return flags;
}

/** Every event of a JSON-lines audit log ([] when the file does not exist). */
export function auditEvents(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** The egress events of an audit log, optionally only those matching `where` (field → value). */
export function egressEvents(file, where = {}) {
  return auditEvents(file).filter((e) => e.event === 'egress' &&
    Object.entries(where).every(([k, v]) => e[k] === v));
}

/** Lines of mcpcell's stderr that deny `host` (the once-per-host sentence). */
export function denialLines(stderr, host) {
  return stderr.split('\n').filter((l) => l.includes('egress denied') && l.includes(host));
}

/** The JSON a fetch_url tool call answered, parsed (the tool returns one JSON text item). */
export function fetchResult(result) {
  const text = (result.content ?? []).map((c) => c.text ?? '').join('');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`fetch_url did not answer JSON: ${text}`);
  }
}

/**
 * Runs egress_probe in a cell with `cellArgs` and `config` (stdin stays open:
 * EOF on mcpcell's stdin means "the client left" and would stop the probe);
 * resolves to
 * { byName: Map attempt → report, run } (run: runMcpcell's result).
 */
export async function runProbe(cellArgs, config, options = {}) {
  assertProbeExists();
  const run = await runInCell(cellArgs, [PROBE_BIN, JSON.stringify(config)], { guardMs: 170_000, ...options });
  return probeReports(run);
}

/** One attempt's report, failing loudly (with mcpcell's stderr) when the probe did not print it. */
export function attempt(probe, name) {
  const r = probe.byName.get(name);
  if (!r) {
    throw new Error(`egress_probe printed no line for ${name}; mcpcell exit ${probe.run.code} ` +
      `signal ${probe.run.signal}; stdout:\n${probe.run.stdout}\nstderr:\n${probe.run.stderr}`);
  }
  return r;
}

/** The allow-list of the user story (issue 5), plus the ports of the local sites. */
// No "localhost": with allow_port it now opens those ports of the host's
// loopback (issue 14 item 3, egress_host_loopback.test.mjs), and the story's
// sites listen there; the story is about names.
export const STORY_HOSTS = Object.freeze(['.acmecorp.com', 'acmecorp.atlassian.net']);

/**
 * The user story's sites on this machine, each an upstream on an ephemeral
 * port, named with --resolve pins to 127.0.0.1:
 *   wiki       wiki.acmecorp.com:P         allowed (".acmecorp.com", port in allow_port)
 *   atlassian  acmecorp.atlassian.net:P    allowed (exact entry)
 *   evil       evil.example:P              denied by host (its port IS in allow_port, and it is
 *                                          pinned: a leak would land here and be seen)
 *   otherPort  wiki.acmecorp.com:P         denied by port (not in allow_port; pinned too)
 * Returns { secret, wiki, atlassian, evil, otherPort, upstreams, outbound, resolve, close() }.
 */
export async function startStorySites() {
  const secret = newSecret();
  const wiki = await startUpstream('wiki', secret);
  const atlassian = await startUpstream('atlassian', secret);
  const evil = await startUpstream('evil', secret);
  const otherPort = await startUpstream('otherport', secret);
  const upstreams = [wiki, atlassian, evil, otherPort];
  return {
    secret,
    wiki,
    atlassian,
    evil,
    otherPort,
    upstreams,
    outbound: {
      allow_host: [...STORY_HOSTS],
      allow_port: [wiki.port, atlassian.port, evil.port],
      insecure_allow_all: false,
    },
    resolve: [
      `wiki.acmecorp.com:${wiki.port}:127.0.0.1`,
      `wiki.acmecorp.com:${otherPort.port}:127.0.0.1`,
      `acmecorp.atlassian.net:${atlassian.port}:127.0.0.1`,
      `evil.example:${evil.port}:127.0.0.1`,
    ],
    close: () => Promise.all(upstreams.map((u) => u.close())),
  };
}

/**
 * Spawns `argv[0]` with the rest of argv (e.g. `unshare -m sh -c ... mcpcell run ...`)
 * like runMcpcell does for mcpcell itself; stdin stays open until it exits
 * (EOF would tell mcpcell the client left). Resolves to {code, signal, stdout, stderr}.
 */
export function runWrapped(argv, { env, guardMs = 170_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')} still running after ${guardMs} ms; stderr:\n${stderr}`));
    }, guardMs);
    child.on('error', (e) => {
      clearTimeout(guard);
      reject(e);
    });
    child.on('exit', () => child.stdin.destroy());
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => {});
  });
}

/** Parses egress_probe's lines (see runProbe) out of a run's stdout. */
export function probeReports(run) {
  const byName = new Map();
  for (const line of run.stdout.split('\n').filter(Boolean)) {
    try {
      const r = JSON.parse(line);
      byName.set(r.attempt, r);
    } catch {
      // not a probe line
    }
  }
  return { byName, run };
}

/**
 * A self-signed certificate (EC P-256, one day) for `names`, made with the
 * openssl CLI into `dir` (world-readable: the cell reads cert.pem as its CA).
 * Returns {key, cert, certFile}, or null with `reason` when openssl is missing.
 */
export function makeCertificate(dir, names) {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', `/CN=${names[0]}`,
      '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    return { reason: `openssl could not make a test certificate: ${e.code === 'ENOENT' ? 'openssl is not installed' : e.message}` };
  }
  writeReadableFile(certFile, readFileSync(certFile, 'utf8'));
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}
