// Adversary pass adv11: the package cache fix of adv10 (commit d83821e,
// src/source/host_tool.cc PackageCacheRoot with OpenCacheDir): mcpcell now
// refuses `<cache>/mcpcell/npx` when someone else owns it or others can
// write it. What it runs from there is still not checked against anything.
//
// Findings:
//   high   XDG_CACHE_HOME (a client's env block sets it on mcpcell) naming a
//          directory of the user's own (a cloned repo, an unpacked download)
//          that holds `mcpcell/npx/<pkg>@<version>`: the planted code runs as
//          the registry's pinned official package, with no cell under a
//          policy that allows official pinned entries. Ownership is no
//          evidence of what the cache holds: a cached install is not checked
//          against the registry's integrity (or a record only mcpcell writes).
//   high   npm_config_registry in mcpcell's environment (HostToolEnvironment
//          keeps npm_config_*: "where from, not what runs") installs another
//          registry's @modelcontextprotocol/server-memory@2026.8.31, which the
//          policy then allows as the official pinned entry: its code runs on
//          the host with no cell. A pinned entry pins a version, not content.
//          HOME (kept for the host npm) naming a dir whose .npmrc sets
//          registry= does the same.
//   medium A package directory inside an owned, go-w npx dir but made by
//          another user (left from a time the dir was shared, or moved in)
//          runs too: only the npx dir itself is checked; the entry, its
//          node_modules and the package files are not. Fixed: every use of
//          an entry checks the path to package.json and to the program
//          (source/cache_entry_owner.h).
//   low    `npx://PKG@.` / `@..` / `@x.tgz` pass the tag check; the host
//          `npm view` (ResolveVersion, without the --allow-file/--allow-directory
//          settings Install has) reads them as a directory or file under "/".

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const GUARD = { guardMs: 60_000 };
const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ROOT = makeTempDir('adv11-cache');
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', ...extra });

// The registry's pinned "memory" entry (the default trusted_tiers trust it).
const ENTRY = '@modelcontextprotocol+server-memory@2026.8.31';

/** Plants, under `cache`, the pinned memory package as code that prints `mark`; returns the entry dir. */
function plant(cache, mark) {
  const entry = path.join(cache, 'mcpcell', 'npx', ENTRY);
  const pkg = path.join(entry, 'node_modules', '@modelcontextprotocol', 'server-memory');
  mkdirSync(pkg, { recursive: true });
  writeReadableFile(path.join(pkg, 'package.json'),
    JSON.stringify({ name: '@modelcontextprotocol/server-memory', version: '2026.8.31', bin: { 'mcp-server-memory': 'index.js' } }));
  writeReadableFile(path.join(pkg, 'index.js'), `console.error(${JSON.stringify(mark)});\n`);
  for (let d = pkg; d.startsWith(cache); d = path.dirname(d)) chmodSync(d, 0o755);
  return entry;
}

let n = 0;
function policy() {
  const p = path.join(ROOT, `${n++}-official.json`);
  writeReadableFile(p, JSON.stringify({ rules: [{ name: 'official-pinned', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

test('adv11: XDG_CACHE_HOME naming a directory of the user\'s own (a cloned repo\'s .cache) runs its planted package as the official pinned one', {
}, async () => {
  // A repository the user cloned: theirs, 0755, and its content the author's.
  const repo = path.join(ROOT, 'cloned-repo');
  const cache = path.join(repo, '.cache');
  mkdirSync(cache, { recursive: true });
  chmodSync(repo, 0o755);
  plant(cache, 'ADV11-PLANTED-OWNED-RAN');
  const r = await runMcpcell(['run', '--policy', policy(), 'memory'], { input: '', env: env({ XDG_CACHE_HOME: cache }), ...GUARD });
  assert.doesNotMatch(r.stderr, /ADV11-PLANTED-OWNED-RAN/, `planted code ran as the official package:\n${r.stderr}`);
});

test('adv11: a package directory another user made inside an owned, go-w npx dir runs as the official pinned package', {
}, async (t) => {
  if (process.getuid() !== 0) return t.skip('planting as another user needs root');
  const cache = path.join(ROOT, 'own-cache');
  mkdirSync(cache);
  chmodSync(cache, 0o755);
  const entry = plant(cache, 'ADV11-PLANTED-OTHER-RAN');
  // mcpcell/ and npx/ are the caller's, 0755; the entry below was made by nobody.
  const chownTree = (d) => {
    chownSync(d, 65534, 65534);
  };
  for (const d of [entry, path.join(entry, 'node_modules'), path.join(entry, 'node_modules', '@modelcontextprotocol'),
    path.join(entry, 'node_modules', '@modelcontextprotocol', 'server-memory'),
    path.join(entry, 'node_modules', '@modelcontextprotocol', 'server-memory', 'index.js'),
    path.join(entry, 'node_modules', '@modelcontextprotocol', 'server-memory', 'package.json')]) chownTree(d);
  const r = await runMcpcell(['run', '--policy', policy(), 'memory'], { input: '', env: env({ XDG_CACHE_HOME: cache }), ...GUARD });
  assert.doesNotMatch(r.stderr, /ADV11-PLANTED-OTHER-RAN/, `another user's code ran as the official package:\n${r.stderr}`);
  // The allow run is refused for its XDG_CACHE_HOME alone (adv11's first
  // finding); in a cell the entry itself must be refused, not run there as
  // the package either.
  const c = await runMcpcell(['run', '--isolate', 'memory'], { input: '', env: env({ XDG_CACHE_HOME: cache }), ...GUARD });
  assert.doesNotMatch(c.stderr, /ADV11-PLANTED-OTHER-RAN/, `another user's code ran in the cell:\n${c.stderr}`);
  assert.match(c.stderr, /owned by uid 65534, not you/, `expected the entry's owner named:\n${c.stderr}`);
  assert.notEqual(c.code, 0, c.stderr);
});

test('adv11 held: a world-writable <cache>/mcpcell/npx is refused, and nothing in it runs', async () => {
  const cache = path.join(ROOT, 'ww-cache');
  mkdirSync(cache);
  chmodSync(cache, 0o755);
  plant(cache, 'ADV11-PLANTED-WW-RAN');
  chmodSync(path.join(cache, 'mcpcell', 'npx'), 0o777);
  const r = await runMcpcell(['run', '--policy', policy(), 'memory'], { input: '', env: env({ XDG_CACHE_HOME: cache }), ...GUARD });
  assert.doesNotMatch(r.stderr, /ADV11-PLANTED-WW-RAN/, r.stderr);
  assert.notEqual(r.code, 0, r.stderr);
});

// ---------------------------------------------------------------------------
// npx:// versions: what the host npm is asked to resolve
// ---------------------------------------------------------------------------

test('adv11: `npx://PKG@.`, `@..` and `@NAME.tgz` pass as tags, and the host `npm view` (no --allow-file/--allow-directory) reads them as a directory or file on the host', {
}, async () => {
  const home = path.join(ROOT, 'tag-home');
  mkdirSync(home, { recursive: true });
  for (const spec of ['.', '..', 'adv11.tgz']) {
    const r = await runMcpcell(['run', '--dry-run', `npx://adv11-not-a-package@${spec}`], {
      input: '',
      env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_registry: 'http://127.0.0.1:9/',
        npm_config_fetch_retries: '0' }),
      ...GUARD,
    });
    assert.doesNotMatch(r.stderr, /npm error (path|enoent)|file:|tarball data/,
      `@${spec}: the host npm read a local path:\n${r.stderr}`);
    assert.match(r.stderr, /not a version, range or tag/, `@${spec}: expected the parse refusal:\n${r.stderr}`);
  }
});

test('adv11 held: npx:// refuses non-registry specs before npm runs (github:, user/repo, git+https:, http:, file:, npm: alias, workspace:, link:, ~/ ./ /)', async () => {
  const home = path.join(ROOT, 'spec-home');
  mkdirSync(home, { recursive: true });
  for (const source of ['npx://foo@github:x/y', 'npx://github:x/y', 'npx://x/y', 'npx://foo@git+https://127.0.0.1:9/x.git',
    'npx://foo@http://127.0.0.1:9/x.tgz', 'npx://foo@file:/tmp', 'npx://foo@npm:bar@1.0.0', 'npx://foo@workspace:*',
    'npx://foo@link:/tmp', 'npx://foo@~/x', 'npx://foo@./x', 'npx://foo@/tmp', 'npx://foo@1.0.0 || github:a/b']) {
    const r = await runMcpcell(['run', '--dry-run', source], {
      input: '', env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_registry: 'http://127.0.0.1:9/' }), ...GUARD,
    });
    assert.equal(r.code, 2, `${source}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /npm error/, `${source}: npm ran:\n${r.stderr}`);
  }
});

// ---------------------------------------------------------------------------
// A registry dependency whose packument puts its tarball on another host
// ---------------------------------------------------------------------------

/** A gzipped tarball of `files` under package/ (npm's layout). */
function tarball(dir, files) {
  const root = path.join(dir, 'package');
  mkdirSync(root, { recursive: true });
  for (const [rel, text] of Object.entries(files)) writeReadableFile(path.join(root, rel), text);
  execFileSync('tar', ['-czf', path.join(dir, 'p.tgz'), '-C', dir, 'package']);
  const bytes = readFileSync(path.join(dir, 'p.tgz'));
  return { bytes, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` };
}

function listen(handler) {
  const server = http.createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('adv11 held: a registry dependency whose packument\'s dist.tarball names another host (the host\'s loopback) is not fetched by the host\'s npm', {
  timeout: 90_000,
}, async (t) => {
  const id = `${process.pid}-${Date.now()}`;
  const top = `adv11-top-${id}`;
  const loot = `adv11-loot-${id}`;
  const dir = makeTempDir('adv11-reg');
  // An internal service on the host's loopback (an artifact server), not the registry.
  const internalTgz = tarball(path.join(dir, 'internal'), { 'package.json': JSON.stringify({ name: loot, version: '1.0.0' }), 'secret.txt': 'ADV11-INTERNAL' });
  const asked = [];
  const internal = await listen((req, res) => {
    asked.push(req.url);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': internalTgz.bytes.length });
    res.end(internalTgz.bytes);
  });
  t.after(() => new Promise((resolve) => internal.close(() => resolve())));
  const topTgz = tarball(path.join(dir, 'top'), {
    'package.json': JSON.stringify({ name: top, version: '1.0.0', bin: { [top]: 'server.js' }, dependencies: { [loot]: '1.0.0' } }),
    'server.js': '#!/usr/bin/env node\n',
  });
  const registry = await listen((req, res) => {
    const base = `http://127.0.0.1:${registry.address().port}`;
    const name = decodeURIComponent(req.url.slice(1).split('?')[0]);
    let body = null;
    if (name === top) {
      body = { name: top, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': {
        name: top, version: '1.0.0', bin: { [top]: 'server.js' }, dependencies: { [loot]: '1.0.0' },
        dist: { tarball: `${base}/${top}/-/${top}-1.0.0.tgz`, integrity: topTgz.integrity } } } };
    } else if (name === loot) {
      body = { name: loot, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': {
        name: loot, version: '1.0.0',
        dist: { tarball: `http://127.0.0.1:${internal.address().port}/artifactory/${loot}-1.0.0.tgz`, integrity: internalTgz.integrity } } } };
    } else if (name === `${top}/-/${top}-1.0.0.tgz`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': topTgz.bytes.length });
      res.end(topTgz.bytes);
      return;
    }
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found' }));
  });
  t.after(() => new Promise((resolve) => registry.close(() => resolve())));
  const home = path.join(dir, 'home');
  mkdirSync(home, { recursive: true });
  chmodSync(home, 0o755);
  const r = await runMcpcell(['install', '--install-scripts=skip', `npx://${top}@1.0.0`], {
    input: '',
    env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
      npm_config_registry: `http://127.0.0.1:${registry.address().port}/`, npm_config_update_notifier: 'false',
      npm_config_fetch_retries: '0' },
    guardMs: 60_000,
  });
  t.diagnostic(r.stderr.split('\n').slice(-4).join('\n'));
  assert.notEqual(r.code, 0, r.stderr);
  assert.deepEqual(asked, [], `the host's npm fetched a URL on the host's loopback that a packument named (exit ${r.code}):\n${r.stderr}`);
});

// ---------------------------------------------------------------------------
// npm_config_* kept for the host npm: "where from" is "what runs"
// ---------------------------------------------------------------------------

test('adv11: npm_config_registry in mcpcell\'s environment (a client env block) installs another registry\'s "official pinned" package, run with no cell', {
  timeout: 90_000,
}, async (t) => {
  const reg = await startPackageRegistry([{
    name: '@modelcontextprotocol/server-memory', version: '2026.8.31',
    manifest: { bin: { 'mcp-server-memory': 'index.js' } },
    files: { 'index.js': '#!/usr/bin/env node\nconsole.error("ADV11-OTHER-REGISTRY-RAN");\n' },
    exec: ['index.js'],
  }]);
  t.after(() => reg.close());
  // By npm_config_registry, and by a HOME whose .npmrc names the registry (HOME passes to the host npm too).
  for (const how of ['HOME/.npmrc', 'npm_config_registry']) {
    const home = path.join(ROOT, `reg-home-${how.replace(/\W/g, '')}`);
    mkdirSync(home, { recursive: true });
    chmodSync(home, 0o755);
    const extra = how === 'npm_config_registry' ? { npm_config_registry: reg.url } : {};
    if (how === 'HOME/.npmrc') writeReadableFile(path.join(home, '.npmrc'), `registry=${reg.url}\n`);
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', policy(), 'memory'], {
      input: '',
      env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_update_notifier: 'false',
        npm_config_fetch_retries: '0', ...extra }),
      guardMs: 80_000,
    });
    assert.doesNotMatch(r.stderr, /ADV11-OTHER-REGISTRY-RAN/,
      `${how}: another registry's package ran as the official pinned entry${/WITHOUT a cell/.test(r.stderr) ? ', with no cell' : ''}:\n${r.stderr}`);
  }
});
