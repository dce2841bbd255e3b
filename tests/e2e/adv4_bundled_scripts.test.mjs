// Adversary pass adv4 on bundled dependencies in the npm install-script
// cells (commit 8d682f2: a bundled package's scripts run in its bundler's
// cell, its directory bound writable on top of the bundler's read-only
// node_modules). Each test is one attack; a test marked todo is a finding
// (it fails on 8d682f2), the rest are attacks that held.
//
// The registry here can serve a manifest that differs from the package.json
// in the tarball ("manifest confusion": the public registry never checks
// that the two agree), and several versions of one name.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

/**
 * A registry of `packages`: {name, version='1.0.0', manifest (the tarball's
 * package.json fields), registryManifest (fields the registry's document
 * says instead; undefined values drop a field), files}. Several entries may
 * share a name (versions); mtimes: {file: seconds} in the tarball.
 * Returns {url, close()}.
 */
async function startRegistry(packages) {
  const built = new Map();
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.slice(1).split('?')[0]);
    const tgz = url.match(/^(.+)\/-\/[^/]+-(\d+\.\d+\.\d+)\.tgz$/);
    const versions = built.get(tgz ? tgz[1] : url);
    if (!versions) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    if (tgz) {
      const p = versions.get(tgz[2]);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': p.bytes.length });
      res.end(p.bytes);
      return;
    }
    const base = `http://127.0.0.1:${server.address().port}`;
    const doc = { name: url, 'dist-tags': {}, versions: {} };
    for (const [v, p] of versions) {
      const tarball = `${base}/${url}/-/${url.replace(/^@[^/]+\//, '')}-${v}.tgz`;
      doc.versions[v] = { ...p.shown, dist: { tarball, shasum: p.shasum, integrity: p.integrity } };
      doc['dist-tags'].latest = v;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  for (const p of packages) {
    const version = p.version ?? '1.0.0';
    const dir = makeTempDir('npm-pkg');
    const root = path.join(dir, 'package');
    mkdirSync(root);
    const manifest = { name: p.name, version, license: 'MIT', ...p.manifest };
    writeReadableFile(path.join(root, 'package.json'), JSON.stringify(manifest, null, 2));
    for (const [rel, text] of Object.entries(p.files ?? {})) {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeReadableFile(path.join(root, rel), text);
    }
    for (const [rel, when] of Object.entries(p.mtimes ?? {})) utimesSync(path.join(root, rel), when, when);
    for (const rel of p.exec ?? []) chmodSync(path.join(root, rel), 0o755);
    const file = path.join(dir, 'package.tgz');
    execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
    const bytes = readFileSync(file);
    const shown = JSON.parse(JSON.stringify({ ...manifest, ...(p.registryManifest ?? {}) }));
    if (!built.has(p.name)) built.set(p.name, new Map());
    built.get(p.name).set(version, {
      shown,
      bytes,
      shasum: createHash('sha1').update(bytes).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
    });
  }
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

let home;
let env;
before(() => {
  home = mkdtempSync('/var/tmp/e2e-adv4-home-');
  chmodSync(home, 0o777);
  env = scriptsEnv(home);
});
after(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

/** Installs npx://top@1.0.0 from `reg`; returns {r, installDir}. */
async function install(top, reg, extraArgs = []) {
  const r = await runMcpcell(['install', ...extraArgs, `npx://${top}@1.0.0`], {
    env: { ...env, npm_config_registry: reg.url }, guardMs: 55_000,
  });
  return { r, installDir: path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`) };
}

/** A script that records, in its own directory, that it ran and what it could write. */
const RECORDER = (tag, tries = {}) => `const fs = require('fs'), p = require('path');
const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
const out = [];
for (const [label, rel] of Object.entries(${JSON.stringify(tries)})) out.push(label + '=' + attempt(() => fs.writeFileSync(p.resolve(__dirname, rel), 'x')));
attempt(() => fs.appendFileSync(p.join(__dirname, 'ran-${tag}'), (out.join(' ') || 'ran') + '\\n'));
`;

// Manifest confusion: the registry's document of `a` names no bundle, its
// tarball's package.json says bundleDependencies [b] and carries
// node_modules/b with an install script. npm (on the host) does not know
// the bundle (its hidden lockfile has no such entry), so mcpcell gives
// a/node_modules/b a cell of its own and says its script runs there; npm in
// that cell reads a's package.json from disk, finds b bundled, and `npm
// rebuild <b>` selects nothing. b's script never runs, yet mcpcell said it
// did and records it as run.
test('manifest confusion: a directory the tarball bundles but the registry does not name — what mcpcell says ran did run', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-mc-top-${id}`;
  const a = `e2e-adv4-mc-a-${id}`;
  const b = `e2e-adv4-mc-b-${id}`;
  const reg = await startRegistry([
    { name: b, manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0' } },
      registryManifest: { bundleDependencies: undefined },
      files: {
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/rec.js`]: RECORDER('b'),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const bDir = path.join(installDir, 'node_modules', a, 'node_modules', b);
  // b's script in a cell of its own, or in its bundler's ("... of the packages a bundles: b (install)").
  const claimed = new RegExp(`running the install scripts of [^\\n]*${b} \\(install\\)`).test(r.stderr);
  const ran = existsSync(path.join(bDir, 'ran-b'));
  // Whatever mcpcell does, what it says must be what happened.
  assert.equal(ran, claimed, `said it ran b's install script: ${claimed}; it ran: ${ran}\n${r.stderr}`);
  assert.ok(ran, `the bundled script never ran:\n${r.stderr}`);
});

// A bundler without scripts of its own gets its run at the place of its
// FIRST bundled package with scripts; a LATER one joins that run. b2
// depends on zr (a package with a build of its own, hoisted beside w):
// "a package after the packages with scripts it depends on" (THREAT_MODEL /
// install_scripts.h) says zr's script runs first.
test('a bundled package\'s scripts run after the scripts of the packages it depends on', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-ord-top-${id}`;
  const w = `e2e-adv4-ord-w-${id}`;
  const zr = `e2e-adv4-ord-zr-${id}`;
  const b1 = `e2e-adv4-ord-b1-${id}`;
  const b2 = `e2e-adv4-ord-b2-${id}`;
  const check = `const fs = require('fs'), p = require('path');
const built = fs.existsSync(p.resolve(__dirname, '..', '..', '..', '${zr}', 'built'));
fs.writeFileSync(p.join(__dirname, 'saw-zr'), built ? 'built' : 'not built');`;
  const reg = await startRegistry([
    { name: zr, manifest: { scripts: { install: 'node -e "require(\'fs\').writeFileSync(\'built\', \'1\')"' } } },
    {
      name: w,
      manifest: { bundleDependencies: [b1, b2], dependencies: { [b1]: '1.0.0', [b2]: '1.0.0' } },
      files: {
        [`node_modules/${b1}/package.json`]: JSON.stringify({ name: b1, version: '1.0.0', scripts: { install: 'node -e 1' } }),
        [`node_modules/${b2}/package.json`]: JSON.stringify({ name: b2, version: '1.0.0', dependencies: { [zr]: '1.0.0' }, scripts: { install: 'node c.js' } }),
        [`node_modules/${b2}/c.js`]: check,
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [w]: '1.0.0', [zr]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const saw = path.join(installDir, 'node_modules', w, 'node_modules', b2, 'saw-zr');
  assert.ok(existsSync(saw), `b2's script did not run:\n${r.stderr}`);
  assert.equal(readFileSync(saw, 'utf8'), 'built', `b2's install script ran before that of its dependency zr:\n${r.stderr}`);
});

// The same disagreement without any help from the registry: a directory in
// a bundle whose package.json has no version is no bundled package to npm
// on the host (arborist transplants only folders with a name@version, the
// rest stay on disk unknown to its hidden lockfile). adv4 found mcpcell
// giving it a cell of its own (that ran nothing) while npm in the bundler's
// cell counted it in the bundle and ran its script THERE, where it could
// write the bundler's directory. mcpcell's rule now (source/script_plan.h):
// a directory npm did not place came out of the tarball of the nearest
// package npm placed above it, and runs in that package's cell — which the
// message says, and which is where it runs: it can write its bundler's
// directory (the same tarball's author wrote both), as said.
test('a versionless directory inside a bundle: its script runs where mcpcell says it does', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-sp-top-${id}`;
  const a = `e2e-adv4-sp-a-${id}`;
  const b = `e2e-adv4-sp-b-${id}`;
  const q = `e2e-adv4-sp-q-${id}`;
  const reg = await startRegistry([
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0' } },
      files: {
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', scripts: { install: 'node -e 1' } }),
        // no version: not transplanted by arborist, still on disk
        [`node_modules/${b}/node_modules/${q}/package.json`]: JSON.stringify({ name: q, scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/node_modules/${q}/rec.js`]: RECORDER('q', { bundler: '../../../../marker-from-q' }),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const aDir = path.join(installDir, 'node_modules', a);
  const qDir = path.join(aDir, 'node_modules', b, 'node_modules', q);
  if (process.env.ADV4_DEBUG) console.error(r.stderr);
  assert.ok(existsSync(path.join(qDir, 'ran-q')), `q's script never ran:\n${r.stderr}`);
  // mcpcell says q runs in a's cell, which can write a's directory and the bundled ones...
  assert.match(r.stderr, new RegExp(`running the install scripts of the packages ${a} bundles: ${b} \\(install\\), ${q} \\(install\\) in a native cell of their own \\(\\d+ of \\d+; it can write \\S*/${a} and the bundled packages' directories only`), r.stderr);
  assert.doesNotMatch(r.stderr, new RegExp(`running the install scripts of ${q}`), r.stderr);
  // ...and that is where it ran, once.
  assert.equal(readFileSync(path.join(qDir, 'ran-q'), 'utf8'), 'bundler=ok\n', `q's script did not run in its bundler's cell:\n${r.stderr}`);
});

// The bundler's cell: its bundled packages (nested ones too) writable, the
// dependency npm placed in its node_modules (another author's x@2, there
// because the top-level x is 1.0.0), its sibling, the top package and the
// install directory not — from the bundled script and from the bundler's.
test('bundled scripts write their own directories, never the bundler\'s npm-placed dependency, a sibling or the install', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-h1-top-${id}`;
  const a = `e2e-adv4-h1-a-${id}`;
  const b = `e2e-adv4-h1-b-${id}`;
  const c = `e2e-adv4-h1-c-${id}`;
  const x = `e2e-adv4-h1-x-${id}`;
  const reg = await startRegistry([
    { name: x, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    { name: x, version: '2.0.0', manifest: { scripts: { install: 'node rec.js' } }, files: { 'rec.js': RECORDER('x') } },
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0', [x]: '2.0.0' }, scripts: { install: 'node rec.js' } },
      files: {
        'rec.js': RECORDER('a', { x: `node_modules/${x}/w`, b: `node_modules/${b}/w-from-a`, top: `../${top}/w` }),
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', bundleDependencies: [c], dependencies: { [c]: '1.0.0' }, scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/rec.js`]: RECORDER('b', { own: 'w', c: `node_modules/${c}/w`, bundler: '../../w-from-b', x: `../${x}/w`, xcode: `../${x}/rec.js`, top: `../../../${top}/w`, install: '../../../../w' }),
        [`node_modules/${b}/node_modules/${c}/package.json`]: JSON.stringify({ name: c, version: '1.0.0', scripts: { postinstall: 'node rec.js' } }),
        [`node_modules/${b}/node_modules/${c}/rec.js`]: RECORDER('c', { own: 'w', b: '../../w-from-c', x: `../../../${x}/w` }),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0', [x]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const aDir = path.join(installDir, 'node_modules', a);
  const bDir = path.join(aDir, 'node_modules', b);
  const read = (f) => (existsSync(f) ? readFileSync(f, 'utf8') : null);
  assert.equal(read(path.join(aDir, 'ran-a')), 'x=EROFS b=ok top=EROFS\n', r.stderr);
  assert.equal(read(path.join(bDir, 'ran-b')), 'own=ok c=ok bundler=ok x=EROFS xcode=EROFS top=EROFS install=EROFS\n', r.stderr);
  assert.equal(read(path.join(bDir, 'node_modules', c, 'ran-c')), 'own=ok b=ok x=EROFS\n', r.stderr);
  // x@2 ran once, in its own cell.
  assert.equal(read(path.join(aDir, 'node_modules', x, 'ran-x')), 'ran\n', r.stderr);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${x} \\(install\\) in a native cell of their own`), r.stderr);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${a} \\(install\\) and of the packages it bundles: (${b} \\(install\\), ${c} \\(postinstall\\)|${c} \\(postinstall\\), ${b} \\(install\\))`), r.stderr);
});

// A bundled script (writable directory in its bundler's cell, its own
// node_modules included) swaps the directory of a LATER step for a symlink
// to the top package's directory: a versionless folder inside the bundle,
// which ran in a cell of its own when this test was written (refused at
// ScriptCellSpec time, realpath) and now runs later in the same cell
// (source/script_plan.h). The step must not follow it: its program checks
// the directory resolves to the one planned and refuses, nothing is written
// to the top package, no host path touched. (A later cell's binds are
// still checked: InstallScriptsTest.CellRefusesAPackageDirThatIsASymlink...)
test('a symlink a bundled script plants where a later step runs: refused, the target unwritten', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-sw-top-${id}`;
  const a = `e2e-adv4-sw-a-${id}`;
  const b = `e2e-adv4-sw-b-${id}`;
  const q = `e2e-adv4-sw-q-${id}`;
  // q's directory is a mount point in this cell (a bundled directory with
  // scripts is bound writable): renaming it fails (EBUSY). So the script
  // swaps the directory above it: node_modules becomes a link to fake/,
  // whose q leads to the top package.
  const swap = `const fs = require('fs'), p = require('path');
const nm = p.join(__dirname, 'node_modules');
let how = 'q';
try {
  fs.renameSync(p.join(nm, '${q}'), p.join(nm, 'old-${q}'));
  fs.symlinkSync('../../../../${top}', p.join(nm, '${q}'));
} catch (e) {
  how = 'node_modules after ' + e.code;
  fs.mkdirSync(p.join(__dirname, 'fake'));
  fs.symlinkSync('../../../../${top}', p.join(__dirname, 'fake', '${q}'));
  fs.renameSync(nm, p.join(__dirname, 'old-node_modules'));
  fs.symlinkSync('fake', nm);
}
fs.writeFileSync(p.join(__dirname, 'swapped'), how);
console.log('swapped: ' + how);`;
  const reg = await startRegistry([
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0' } },
      files: {
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', scripts: { preinstall: 'node swap.js' } }),
        [`node_modules/${b}/swap.js`]: swap,
        // cwd-relative: wherever npm runs it from (through the link, too)
        [`node_modules/${b}/node_modules/${q}/package.json`]: JSON.stringify({ name: q, scripts: { install: 'node -e "try { require(\'fs\').writeFileSync(\'pwned\', \'1\') } catch (e) {}"' } }),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const tmp = r.stderr.match(/(\/\S+\/\.install-[^/\s]+)\//)?.[1];
  // The swap happened (the bundled script could write its own node_modules)...
  assert.match(r.stderr, new RegExp(`running the install scripts of the packages ${a} bundles: ${b} \\(preinstall\\)`), r.stderr);
  assert.match(r.stderr, /swapped: /, r.stderr);
  // ...and the later step refused the link rather than run in the top package.
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`the install script of ${q}@ is no longer a plain directory \\(an earlier script replaced it\\?\\): refusing to run it there`), r.stderr);
  assert.ok(!existsSync(path.join(installDir, 'node_modules', top, 'pwned')));
  if (tmp) assert.ok(!existsSync(path.join(tmp, 'node_modules', top, 'pwned')), 'the top package was written through the link');
});

// ReadLockfileMarks drops every hidden-lockfile key with ".." anywhere in
// it, so a bundled folder named "x..y" (a plain name, no path step) is no
// bundled package to mcpcell: it gets a cell of its own, in which npm (who
// knows it is bundled) selects nothing; its bundler has no scripts, so no
// cell runs it at all — while mcpcell says it ran and records it.
test('a bundled folder whose name contains "..": its script runs, where mcpcell says', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-dd-top-${id}`;
  const a = `e2e-adv4-dd-a-${id}`;
  const b = `e2e-adv4-dd-b..${id}`;
  const reg = await startRegistry([
    {
      name: a,
      manifest: { bundleDependencies: [b] },
      files: {
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: 'dd', version: '1.0.0', scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/rec.js`]: RECORDER('b'),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const bDir = path.join(installDir, 'node_modules', a, 'node_modules', b);
  assert.ok(existsSync(path.join(bDir, 'package.json')), `npm did not keep the bundled folder:\n${r.stderr}`);
  const claimed = r.stderr.includes(`${b} (install)`);
  const ran = existsSync(path.join(bDir, 'ran-b'));
  assert.equal(ran, claimed, `said it ran the bundled script: ${claimed}; it ran: ${ran}\n${r.stderr}`);
  assert.ok(ran, `the bundled script never ran:\n${r.stderr}`);
});

// The tarball carries its own hidden lockfile (node_modules/.package-lock.json,
// dated in the future so npm's loadActual of the bundle would trust it)
// claiming that the dependency npm places in its node_modules (another
// author's x@2) is bundled. npm's top-level hidden lockfile — what mcpcell
// reads — must not say so: x@2 stays out of the bundler's reach and runs in
// its own cell.
test('a hidden lockfile inside the tarball does not make an npm-placed dependency "bundled"', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-hl-top-${id}`;
  const a = `e2e-adv4-hl-a-${id}`;
  const b = `e2e-adv4-hl-b-${id}`;
  const x = `e2e-adv4-hl-x-${id}`;
  const lock = JSON.stringify({
    name: a, version: '1.0.0', lockfileVersion: 3, requires: true,
    packages: { [`node_modules/${b}`]: { version: '1.0.0', inBundle: true }, [`node_modules/${x}`]: { version: '2.0.0', inBundle: true } },
  });
  const reg = await startRegistry([
    { name: x, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    { name: x, version: '2.0.0', manifest: { scripts: { install: 'node rec.js' } }, files: { 'rec.js': RECORDER('x') } },
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0', [x]: '2.0.0' }, scripts: { install: 'node rec.js' } },
      files: {
        'rec.js': RECORDER('a', { x: `node_modules/${x}/w` }),
        'node_modules/.package-lock.json': lock,
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/rec.js`]: RECORDER('b', { x: `../${x}/w` }),
      },
      mtimes: { 'node_modules/.package-lock.json': Math.floor(Date.now() / 1000) + 86400 * 365 },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0', [x]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const aDir = path.join(installDir, 'node_modules', a);
  const read = (f) => (existsSync(f) ? readFileSync(f, 'utf8') : null);
  assert.equal(read(path.join(aDir, 'ran-a')), 'x=EROFS\n', r.stderr);
  assert.equal(read(path.join(aDir, 'node_modules', b, 'ran-b')), 'x=EROFS\n', r.stderr);
  assert.equal(read(path.join(aDir, 'node_modules', x, 'ran-x')), 'ran\n', r.stderr);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${x} \\(install\\) in a native cell of their own`), r.stderr);
});

// Twice: the versionless folder q inside bundled b (above) runs in a's cell
// (npm counts it in a's bundle); b's preinstall, in the same cell, rewrites
// a's package.json without bundleDependencies (a's directory is writable
// there). In q's own cell, later, npm reads the disk again: q is no bundled
// package now, `npm rebuild <q>` selects it, its script runs a second time.
test('an install script runs once, even when an earlier cell rewrites its bundler\'s package.json', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-tw-top-${id}`;
  const a = `e2e-adv4-tw-a-${id}`;
  const b = `e2e-adv4-tw-b-${id}`;
  const q = `e2e-adv4-tw-q-${id}`;
  const unbundle = `const fs = require('fs'), p = require('path');
const f = p.resolve(__dirname, '..', '..', 'package.json');
const j = JSON.parse(fs.readFileSync(f, 'utf8')); delete j.bundleDependencies; delete j.bundledDependencies;
fs.writeFileSync(f, JSON.stringify(j));`;
  const reg = await startRegistry([
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0' } },
      files: {
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0', scripts: { preinstall: 'node u.js' } }),
        [`node_modules/${b}/u.js`]: unbundle,
        [`node_modules/${b}/node_modules/${q}/package.json`]: JSON.stringify({ name: q, scripts: { install: 'node rec.js' } }),
        [`node_modules/${b}/node_modules/${q}/rec.js`]: RECORDER('q'),
      },
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const runs = path.join(installDir, 'node_modules', a, 'node_modules', b, 'node_modules', q, 'ran-q');
  assert.ok(existsSync(runs), `q's script never ran:\n${r.stderr}`);
  assert.equal(readFileSync(runs, 'utf8'), 'ran\n', `q's install script ran more than once:\n${r.stderr}`);
});

// Not bundle-specific, found on the way: npm's run-script puts every
// ancestor's node_modules/.bin on PATH BEFORE its own node-gyp-bin, and the
// host's `npm install --ignore-scripts` still links bins. A package with no
// install script at all, only "bin": {"node-gyp": ...}, owns
// <install>/node_modules/.bin/node-gyp; another author's native package v
// (a binding.gyp: npm's implicit `node-gyp rebuild`) then runs it in v's
// own cell, where v's directory is writable: one package's code changes
// another's, which the per-package cells exist to prevent.
// Fixed: in each script cell every node_modules/.bin is hidden and the
// nearest shows only the bins of the package's declared dependencies
// (src/source/script_bins.h).
test('a package\'s "node-gyp" bin does not run in another package\'s cell', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-gyp-top-${id}`;
  const evil = `e2e-adv4-gyp-evil-${id}`;
  const v = `e2e-adv4-gyp-v-${id}`;
  const shim = `#!/usr/bin/env node
const fs = require('fs'), p = require('path');
try { fs.writeFileSync(p.join(process.cwd(), 'pwned-by-${evil}'), process.cwd()); } catch (e) {}
try { fs.appendFileSync(p.join(process.cwd(), 'index.js'), '\\n/* changed by ${evil} */\\n'); } catch (e) {}
`;
  const reg = await startRegistry([
    { name: evil, manifest: { bin: { 'node-gyp': 'shim.js' } }, files: { 'shim.js': shim } },
    // An install script that runs node-gyp from its PATH, as npm's default
    // `node-gyp rebuild` for a binding.gyp does (here only its version: the
    // real node-gyp must answer, not evil's shim).
    { name: v, manifest: { main: 'index.js', scripts: { install: 'node-gyp --version' } }, files: { 'index.js': 'module.exports = 1;\n' } },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [evil]: '1.0.0', [v]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const vDir = path.join(installDir, 'node_modules', v);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${v} \\(install\\)`), r.stderr);
  assert.ok(!existsSync(path.join(vDir, `pwned-by-${evil}`)), `${evil}'s bin ran in ${v}'s cell and wrote its directory:\n${r.stderr}`);
  assert.equal(readFileSync(path.join(vDir, 'index.js'), 'utf8'), 'module.exports = 1;\n', `${v}'s code was changed by ${evil}:\n${r.stderr}`);
});

// The same through a bundle: the bundler's tarball ships its own
// node_modules/.bin/node-gyp (a plain file: npm strips links, not files).
// x@2, another author's native package npm placed in the bundler's
// node_modules (the top-level x is 1.0.0), builds in its own cell; npm's
// run-script put <bundler>/node_modules/.bin on PATH ahead of its node-gyp.
// As first written, x@2's binding.gyp had no target, so even the real
// node-gyp failed (gyp: IndexError) and nothing was published to look at;
// it now builds one (an empty C file) through npm's own node-gyp wrapper,
// the implicit `node-gyp rebuild` of a binding.gyp. Fixed: the cell's PATH
// is the package's command view, npm's node-gyp wrapper and the system's
// (no .bin chain), and every .bin stays hidden (script_bins.h).
test('a bundler\'s tarball-shipped node_modules/.bin does not run in the cell of a package npm placed below it', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-gyb-top-${id}`;
  const a = `e2e-adv4-gyb-a-${id}`;
  const b = `e2e-adv4-gyb-b-${id}`;
  const x = `e2e-adv4-gyb-x-${id}`;
  const shim = `#!/bin/sh
echo "$PWD" > pwned-by-bundler 2>/dev/null
exit 0
`;
  const reg = await startRegistry([
    { name: x, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    {
      name: x,
      version: '2.0.0',
      manifest: { main: 'index.js' },
      files: { 'index.js': 'module.exports = 2;\n', 'binding.gyp': '{"targets": [{"target_name": "x", "sources": ["x.c"]}]}\n', 'x.c': 'int x_unused;\n' },
    },
    {
      name: a,
      manifest: { bundleDependencies: [b], dependencies: { [b]: '1.0.0', [x]: '2.0.0' } },
      files: {
        'node_modules/.bin/node-gyp': shim,
        [`node_modules/${b}/package.json`]: JSON.stringify({ name: b, version: '1.0.0' }),
      },
      exec: ['node_modules/.bin/node-gyp'],
    },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [a]: '1.0.0', [x]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const aDir = path.join(installDir, 'node_modules', a);
  const xDir = path.join(aDir, 'node_modules', x);
  // The precondition: npm placed x@2 below the bundler and kept the tarball's .bin/node-gyp.
  assert.equal(readFileSync(path.join(xDir, 'index.js'), 'utf8'), 'module.exports = 2;\n', `x@2 is not below the bundler:\n${r.stderr}`);
  assert.ok(existsSync(path.join(aDir, 'node_modules', '.bin', 'node-gyp')), `npm did not keep the tarball's .bin/node-gyp:\n${r.stderr}`);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${x} \\(install\\)`), r.stderr);
  assert.ok(!existsSync(path.join(xDir, 'pwned-by-bundler')), `the bundler's node_modules/.bin/node-gyp ran in x@2's cell and wrote its directory:\n${r.stderr}`);
  // npm's node-gyp ran instead, and built.
  assert.ok(existsSync(path.join(xDir, 'build', 'Release', 'x.node')), `npm's node-gyp did not build x@2:\n${r.stderr}`);
});

// Wider still: the bin may be named after anything a script calls, "node"
// included — nearly every install script starts with it.
test('a package\'s "node" bin does not run in another package\'s cell', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv4-nb-top-${id}`;
  const evil = `e2e-adv4-nb-evil-${id}`;
  const v = `e2e-adv4-nb-v-${id}`;
  // Does its work, then hands over to the real node: the build still succeeds.
  const shim = `#!/bin/sh
echo "$PWD" > pwned-by-${evil} 2>/dev/null
exec /usr/bin/node "$@"
`;
  const reg = await startRegistry([
    { name: evil, manifest: { bin: { node: 'shim.sh' } }, files: { 'shim.sh': shim }, exec: ['shim.sh'] },
    { name: v, manifest: { scripts: { install: 'node build.js' } }, files: { 'build.js': 'require("fs").writeFileSync("built", "1");\n' } },
    { name: top, manifest: { bin: { [top]: 'server.js' }, dependencies: { [evil]: '1.0.0', [v]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const vDir = path.join(installDir, 'node_modules', v);
  assert.ok(existsSync(path.join(vDir, 'built')), r.stderr);
  assert.ok(!existsSync(path.join(vDir, `pwned-by-${evil}`)), `${evil}'s "node" ran in ${v}'s cell and wrote its directory:\n${r.stderr}`);
});
