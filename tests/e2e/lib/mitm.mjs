// A man in the middle for the adversary tests of allowed sources (adv13,
// adv14): a CA of the test's own, a certificate it signed for the public
// registry's or index's name, and an HTTP proxy that answers every CONNECT
// with a local server of the test's.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { startPackageRegistry } from './npm_registry.mjs';
import { makeCertificates } from './tls_certs.mjs';
import { makeTempDir, writeReadableFile } from './tmp.mjs';

/**
 * In `dir`: a CA named `caName` (ca.pem) and a certificate it signed for
 * `hosts` (the first its subject). Returns { tls: { key, cert }, ca }.
 */
export function mitmCertificate(dir, caName, hosts) {
  const c = makeCertificates(dir, caName, { subject: hosts[0], names: hosts.map((h) => `DNS:${h}`) });
  return { tls: { key: c.key, cert: c.cert }, ca: c.ca };
}

/**
 * An HTTP proxy on 127.0.0.1 that tunnels every CONNECT, whatever its
 * target, to 127.0.0.1:`port`; closed after test `t`. Returns { url, connects }
 * (connects: the targets asked for).
 */
export async function connectProxy(t, port) {
  const connects = [];
  const proxy = http.createServer((_q, s) => { s.writeHead(400); s.end(); });
  proxy.on('connect', (req, sock, head) => {
    connects.push(req.url);
    const up = net.connect(port, '127.0.0.1', () => {
      sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      sock.pipe(up);
      up.pipe(sock);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => { proxy.close(); });
  return { url: `http://127.0.0.1:${proxy.address().port}`, connects };
}

/** `name`@1.0.0 for startPackageRegistry: its bin `srv` prints `mark` on stderr. */
export function markingPackage(name, mark) {
  return {
    name, version: '1.0.0', manifest: { bin: { srv: 'index.js' } },
    files: { 'index.js': `#!/usr/bin/env node\nconsole.error(${JSON.stringify(mark)});\n` }, exec: ['index.js'],
  };
}

/**
 * An https registry (`tls`) serving markingPackage(name, mark) behind a
 * connectProxy: what npm reaches for any host through HTTPS_PROXY. Both are
 * closed after test `t`. Returns { url (the proxy's), connects }.
 */
export async function mitmRegistry(t, name, mark, tls) {
  const reg = await startPackageRegistry([markingPackage(name, mark)], { tls });
  t.after(() => reg.close());
  return connectProxy(t, reg.port);
}

/**
 * The tarball of `name`@1.0.0 whose bin `srv` prints `mark` on stderr, for a
 * registry written by hand (one that lies in its package document). Returns
 * { manifest, bytes, integrity }.
 */
export function markingTarball(label, name, mark) {
  const dir = makeTempDir(label);
  mkdirSync(path.join(dir, 'package'));
  const manifest = { name, version: '1.0.0', license: 'MIT', bin: { srv: 'index.js' } };
  writeReadableFile(path.join(dir, 'package', 'package.json'), JSON.stringify(manifest));
  writeReadableFile(path.join(dir, 'package', 'index.js'), `#!/usr/bin/env node\nconsole.error(${JSON.stringify(mark)});\n`);
  chmodSync(path.join(dir, 'package', 'index.js'), 0o755);
  execFileSync('tar', ['-czf', path.join(dir, 'p.tgz'), '-C', dir, 'package']);
  const bytes = readFileSync(path.join(dir, 'p.tgz'));
  return { manifest, bytes, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` };
}

/** The package document of markingTarball's package, its tarball named on registry.npmjs.org. */
export function npmjsDocument({ manifest, integrity }) {
  const { name } = manifest;
  return { name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { ...manifest,
    dist: { tarball: `https://registry.npmjs.org/${name}/-/${name}-1.0.0.tgz`, integrity } } } };
}

/**
 * A registry that lies (adv14): its package document for `name` names
 * registry.npmjs.org as the tarball's home, and it serves markingTarball's
 * bytes for any .tgz. Closed after test `t`. Returns { url, requests }.
 */
export async function lyingRegistry(t, label, name, mark) {
  const tarball = markingTarball(label, name, mark);
  const requests = [];
  const server = http.createServer((q, r) => {
    requests.push(`${q.method} ${q.url}`);
    if (q.url.endsWith('.tgz')) { r.writeHead(200); r.end(tarball.bytes); return; }
    if (decodeURIComponent(q.url.slice(1)) !== name) { r.writeHead(404); r.end('{}'); return; }
    r.writeHead(200, { 'content-type': 'application/json' });
    r.end(JSON.stringify(npmjsDocument(tarball)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}/`, requests };
}
