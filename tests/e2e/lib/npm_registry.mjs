// A tiny npm registry on 127.0.0.1 for the npx install tests: one package,
// built here as a real tarball, so npm (run by mcpcell) installs it without
// the network. Modes make the install stall at a known point:
//   'serve'        answers everything
//   'holdTarball'  answers the package document, holds every tarball request
//                  open (npm is then inside `npm install`, fetching) until
//                  release() — `tarballRequested` resolves when one arrives
//   'silent'       accepts connections and never answers
// npm is pointed at it through the environment only (npmEnv), for the one
// test that asks.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { after, before } from 'node:test';

import { runMcpcell } from './mcpcell.mjs';
import { makeTempDir, writeReadableFile } from './tmp.mjs';

/** The package's program: echoes stdin to stdout (enough to show it ran in a cell). */
const SERVER_JS = '#!/usr/bin/env node\nprocess.stdin.pipe(process.stdout);\n';

/** Builds `name@version` as an npm tarball; returns {file, shasum, integrity}. */
function packTarball(name, version, scripts) {
  const dir = makeTempDir('npm-pkg');
  const pkg = path.join(dir, 'package');
  mkdirSync(pkg);
  writeReadableFile(path.join(pkg, 'package.json'),
    JSON.stringify({ name, version, bin: { [name]: 'server.js' }, license: 'MIT', ...(scripts ? { scripts } : {}) }, null, 2));
  writeReadableFile(path.join(pkg, 'server.js'), SERVER_JS);
  const file = path.join(dir, `${name}-${version}.tgz`);
  execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
  const bytes = readFileSync(file);
  return {
    bytes,
    shasum: createHash('sha1').update(bytes).digest('hex'),
    integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
  };
}

/**
 * Starts the registry serving `name@version` in `mode` (`scripts`: the
 * package.json "scripts" of the package, e.g. a postinstall). Returns
 * { url, name, version, tarballRequested, release(), requests, close() }.
 */
export async function startRegistry(name, version, mode = 'serve', { scripts } = {}) {
  const tar = packTarball(name, version, scripts);
  const requests = [];
  const held = [];
  let resolveTarball;
  const tarballRequested = new Promise((r) => (resolveTarball = r));
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (mode === 'silent') return; // never answers
    const base = `http://127.0.0.1:${server.address().port}`;
    if (req.url.endsWith('.tgz')) {
      resolveTarball();
      if (mode === 'holdTarball') {
        held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tar.bytes.length });
      res.end(tar.bytes);
      return;
    }
    if (decodeURIComponent(req.url.slice(1).split('?')[0]) === name) {
      const doc = {
        name,
        'dist-tags': { latest: version },
        versions: {
          [version]: {
            name, version, bin: { [name]: 'server.js' },
            dist: { tarball: `${base}/${name}/-/${name}-${version}.tgz`, shasum: tar.shasum, integrity: tar.integrity },
          },
        },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    name,
    version,
    requests,
    tarballRequested,
    release: () => {
      mode = 'serve';
      for (const res of held.splice(0)) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tar.bytes.length });
        res.end(tar.bytes);
      }
    },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/**
 * The environment for an mcpcell whose npm must use `registry` and nothing
 * else: its own npm cache (so nothing comes from, or goes to, the user's) and
 * no update check (it would contact the public registry).
 */
export function npmEnv(registry, cacheHome) {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: 'C.UTF-8',
    XDG_CACHE_HOME: cacheHome,
    npm_config_registry: registry.url,
    npm_config_cache: path.join(cacheHome, 'npm'),
    npm_config_update_notifier: 'false',
    npm_config_fetch_retries: '0',
  };
}

/**
 * A registry serving several packages, each built here from its files:
 * `packages` is a list of { name, version, manifest, files } (manifest: the
 * package.json fields beyond name and version; files: { 'relative/path': text },
 * or a function of the registry's { url, port } that returns them; exec: the
 * files made executable in the tarball).
 * Options: `tls` ({ key, cert }: serve https), `host` (the name in its URLs,
 * default 127.0.0.1; it listens on 127.0.0.1 whatever the name).
 * Returns { url, port, requests, authorizations, close() } (authorizations:
 * [url, Authorization header or null] per request).
 */
export async function startPackageRegistry(packages, { tls, host = '127.0.0.1' } = {}) {
  const built = new Map();
  const requests = [];
  const authorizations = [];
  const sockets = new Set();
  const scheme = tls ? 'https' : 'http';
  const handler = (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    authorizations.push([req.url, req.headers.authorization ?? null]);
    // The tarball on the origin the client asked (a front, a name): npm fetches
    // a registry tarball only from the registry's own origin (allow-remote=none).
    const base = `${scheme}://${req.headers.host ?? `${host}:${server.address().port}`}`;
    const url = decodeURIComponent(req.url.slice(1).split('?')[0]);
    const tgz = url.match(/^(.+)\/-\/[^/]+\.tgz$/);
    const pkg = built.get(tgz ? tgz[1] : url);
    if (!pkg) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    if (tgz) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': pkg.bytes.length });
      res.end(pkg.bytes);
      return;
    }
    const { name, version } = pkg.manifest;
    const tarball = `${base}/${name}/-/${name.replace(/^@[^/]+\//, '')}-${version}.tgz`;
    const doc = {
      name,
      'dist-tags': { latest: version },
      versions: { [version]: { ...pkg.manifest, dist: { tarball, shasum: pkg.shasum, integrity: pkg.integrity } } },
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const where = { url: `${scheme}://${host}:${server.address().port}/`, port: server.address().port };
  for (const p of packages) {
    const dir = makeTempDir('npm-pkg');
    const root = path.join(dir, 'package');
    mkdirSync(root);
    const manifest = { name: p.name, version: p.version, license: 'MIT', ...p.manifest };
    writeReadableFile(path.join(root, 'package.json'), JSON.stringify(manifest, null, 2));
    const files = typeof p.files === 'function' ? p.files(where) : (p.files ?? {});
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeReadableFile(path.join(root, rel), text);
    }
    for (const rel of p.exec ?? []) chmodSync(path.join(root, rel), 0o755);
    const file = path.join(dir, 'package.tgz');
    execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
    const bytes = readFileSync(file);
    built.set(p.name, {
      manifest,
      bytes,
      shasum: createHash('sha1').update(bytes).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
    });
  }
  return {
    ...where,
    requests,
    authorizations,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** The environment an install-scripts test runs mcpcell in: the given home, its cache, npm's own cache beside it. */
export function scriptsEnv(home) {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8',
    XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_cache: path.join(home, 'npm-cache'),
    npm_config_update_notifier: 'false',
  };
}

/**
 * A home of its own for a file of install-scripts tests (made before its
 * tests, removed after them): { home(), install(top, reg) }, where install
 * runs `mcpcell install npx://<top>@1.0.0` against `reg` and resolves to
 * { r, installDir } (guardMs: how long before it counts as hung).
 */
export function scriptsHome(prefix) {
  let home;
  let env;
  before(() => {
    home = mkdtempSync(`/var/tmp/${prefix}-`);
    chmodSync(home, 0o777);
    env = scriptsEnv(home);
  });
  after(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });
  return {
    home: () => home,
    install: async (top, reg, { guardMs = 55_000 } = {}) => {
      const r = await runMcpcell(['install', `npx://${top}@1.0.0`], {
        env: { ...env, npm_config_registry: reg.url }, guardMs,
      });
      return { r, installDir: path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`) };
    },
  };
}
