// Adversary pass adv14 (session 14): allow runs of uvx:// refuse every
// PIP_*/UV_* variable (PIP_CERT among them) and pip config files. pip's
// HTTP library (requests) reads its CA bundle from the environment too:
// REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE, which neither the allow check
// (WhySourceIsSwappable in src/cli/launch_plan.cc) nor the host pip's
// dropped names (src/source/uvx_install.cc) cover.
//
// Finding:
//   high   HTTPS_PROXY + REQUESTS_CA_BUNDLE (a CA of the proxy's): the proxy
//          answers for pypi.org, and its wheel of the trusted uvx://PKG@V is
//          installed and run with no cell.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv14-uvx-mitm');
const ID = `${process.pid}${Date.now() % 100000}`;

function pypiCertificate(dir) {
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=adv14 pypi mitm ca']);
  run(['req', ...ec, '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=pypi.org']);
  writeReadableFile(path.join(dir, 'san.ext'), 'subjectAltName=DNS:pypi.org,DNS:files.pythonhosted.org\n');
  run(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '2', '-extfile', 'san.ext']);
  chmodSync(path.join(dir, 'ca.pem'), 0o644);
  return { tls: { key: readFileSync(path.join(dir, 'srv.key')), cert: readFileSync(path.join(dir, 'srv.pem')) }, ca: path.join(dir, 'ca.pem') };
}

/** A proxy that answers every CONNECT with a TLS server (pypi.org's name, the test's CA) in front of the http index. */
async function mitmIndex(t, idx, tls) {
  const port = Number(new URL(idx.url).port);
  const front = https.createServer(tls, (req, res) => {
    const up = http.request({ host: '127.0.0.1', port, path: req.url, method: req.method }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
    up.on('error', () => res.destroy());
    up.end();
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  const connects = [];
  const proxy = http.createServer((_q, s) => { s.writeHead(400); s.end(); });
  proxy.on('connect', (req, sock, head) => {
    connects.push(req.url);
    const up = net.connect(front.address().port, '127.0.0.1', () => {
      sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      sock.pipe(up);
      up.pipe(sock);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => { proxy.close(); front.close(); });
  return { url: `http://127.0.0.1:${proxy.address().port}`, connects };
}

test('adv14: HTTPS_PROXY + REQUESTS_CA_BUNDLE: a proxy answers for pypi.org and its wheel of a trusted uvx:// package runs with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  const cert = pypiCertificate(makeTempDir('adv14-pypi-ca'));
  for (const [i, name] of ['REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'].entries()) {
    const version = `14.${ID}.${7 + i}`;
    const idx = await startIndex([version]);
    t.after(() => idx.close());
    const proxy = await mitmIndex(t, idx, cert.tls);
    const entry = path.join(ACCOUNT_CACHE, 'uvx', `${PY_PROJECT}@${version}`);
    const policy = path.join(ROOT, `${i}-policy.json`);
    writeReadableFile(policy, JSON.stringify({ trusted_sources: [`uvx://${PY_PROJECT}@${version}`], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
    const r = await runMcpcell(['run', '--policy', policy, `uvx://${PY_PROJECT}@${version}`], {
      input: '', env: { PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', HTTPS_PROXY: proxy.url, [name]: cert.ca }, guardMs: 55_000,
    });
    rmSync(entry, { recursive: true, force: true });
    t.diagnostic(`${name}: exit ${r.code}; CONNECTs ${proxy.connects.join(', ')}; index asked ${idx.requests.join(', ')}`);
    if (idx.requests.some((q) => q.includes('.whl')) && /WITHOUT a cell/.test(r.stderr)) ran.push(`${name}: the proxy's wheel ran with no cell:\n${r.stderr}`);
  }
  assert.deepEqual(ran, []);
});
