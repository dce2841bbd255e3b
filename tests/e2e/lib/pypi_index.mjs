// A tiny PEP 503 "simple" package index on 127.0.0.1 for the uvx:// tests
// (no public index is reachable here): one project, e2e-pyserver
// (servers/py/e2e_pyserver.py), built as real wheels by lib/make_wheel.py
// with Debian's python3 (stdlib only: no setuptools, no network). Modes:
//   'serve'   answers the project page and the wheels
//   'silent'  accepts connections and never answers (an index that hangs)
// pip is pointed at it through the user's own pip.conf (pipConfigHome).

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { E2E_DIR } from './paths.mjs';
import { makeTempDir, writeReadableFile } from './tmp.mjs';

export const PY_PROJECT = 'e2e-pyserver';

/** Builds the wheel of `version`; returns {file, bytes}. */
function buildWheel(version) {
  const dir = makeTempDir('wheel');
  const source = readFileSync(path.join(E2E_DIR, 'servers', 'py', 'e2e_pyserver.py'), 'utf8');
  const module = path.join(dir, 'e2e_pyserver.py');
  writeFileSync(module, source.replace('@VERSION@', version));
  const file = execFileSync('/usr/bin/python3', [path.join(E2E_DIR, 'lib', 'make_wheel.py'), dir, PY_PROJECT, version, module],
    { encoding: 'utf8' }).trim();
  return { file, bytes: readFileSync(path.join(dir, file)) };
}

/**
 * Starts the index serving `versions` in `mode`. Returns
 * { url (".../simple/"), requests, close() }.
 */
export async function startIndex(versions, mode = 'serve') {
  const wheels = new Map(versions.map((v) => { const w = buildWheel(v); return [w.file, w.bytes]; }));
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (mode === 'silent') return; // never answers
    if (req.url === `/simple/${PY_PROJECT}/`) {
      const links = [...wheels.keys()].map((f) => `<a href="/files/${f}">${f}</a>`).join('\n');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!DOCTYPE html><html><body>\n${links}\n</body></html>\n`);
      return;
    }
    const file = req.url.startsWith('/files/') ? req.url.slice('/files/'.length) : null;
    if (file && wheels.has(file)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(wheels.get(file));
      return;
    }
    res.writeHead(404);
    res.end('not found\n');
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/simple/`,
    requests,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

/**
 * A HOME whose only pointer to `indexUrl` is the user's own pip.conf
 * (~/.config/pip/pip.conf), and an environment with nothing of the test
 * runner's pip settings: an install that ignores the user's config asks the
 * default index, unreachable here, and fails.
 */
export function pipConfigHome(indexUrl, label) {
  const home = makeTempDir(`${label}-home`);
  mkdirSync(path.join(home, '.config', 'pip'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = ${indexUrl}\nretries = 0\n`);
  return {
    home,
    cache: path.join(home, '.cache'),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') },
  };
}
