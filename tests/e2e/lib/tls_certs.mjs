// A private CA and a server certificate it signed, made with openssl, for
// registries served over https in the e2e tests.

import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { writeReadableFile } from './tmp.mjs';

/**
 * In `dir`: a CA named `cn` (ca.pem, readable by every user) and a
 * certificate it signed for `names` (subjectAltName entries; localhost and
 * 127.0.0.1 unless given) with subject CN `subject`. Returns
 * { key, cert } (for https.createServer) and ca (the CA's path).
 */
export function makeCertificates(dir, cn, { subject = 'localhost', names = ['DNS:localhost', 'IP:127.0.0.1'] } = {}) {
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${cn}`]);
  run(['req', ...ec, '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', `/CN=${subject}`]);
  writeReadableFile(path.join(dir, 'san.ext'), `subjectAltName=${names.join(',')}\n`);
  run(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '2', '-extfile', 'san.ext']);
  chmodSync(path.join(dir, 'ca.pem'), 0o644);
  return { key: readFileSync(path.join(dir, 'srv.key')), cert: readFileSync(path.join(dir, 'srv.pem')), ca: path.join(dir, 'ca.pem') };
}
