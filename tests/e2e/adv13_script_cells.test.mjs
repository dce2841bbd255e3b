// Adversary pass adv13 (session 13): npm install-script cells
// (src/cell/script_cell.cc ScriptCellSpec, src/source/install_scripts.cc)
// after the adv9/adv11 fixes: RLIMIT_FSIZE of 1 GiB, output shown up to
// 1 MiB, the host's npm config kept out of the cell.
//
// Findings (each a `todo` test that fails on the binary it was found on):
//   medium RLIMIT_FSIZE bounds each file, not the cell: a script that
//          fallocates three files of 1000 MiB puts ~3 GiB on the host's disk
//          (the npx cache), and the install publishes them. adv9's
//          "a script cannot put gigabytes on the host's disk" holds only for
//          one file.
//   medium npm's global npmrc (`npm config get globalconfig`: /usr/etc/npmrc
//          or /usr/local/etc/npmrc for an npm installed under /usr or
//          /usr/local) is readable in every cell, the install-script cells
//          included, through the /usr system mount. ScriptCellSpec points
//          npm_config_globalconfig elsewhere because "the global npmrc may hold
//          a registry token", but the file itself is not masked; credentials.cc
//          masks ~/.npmrc and never the global one.
//   high   the host npm that installs an npx:// package (outside every cell,
//          for isolated runs too) is the first `npm` on any absolute PATH
//          entry of mcpcell's environment that no cell can write: a client env
//          block's PATH=${workspaceFolder}/node_modules/.bin:... runs the
//          repository's own npm (and node, by its #!/usr/bin/env) as the user.
//          adv10 dropped NODE_OPTIONS from the host npm's environment for the
//          same reason; PATH chooses the program itself.
//   high   PIP_REQUIREMENT (mcpcell's environment: a client env block) names
//          a requirements file; its `--no-binary :all:` line overrides the
//          install's --only-binary=:all:, and the host pip builds a source
//          distribution, running the package's build backend on the host as
//          the user, for an isolated uvx:// run (mcpcell's own error then says
//          "only wheels are installed"). PIP_PREFIX/PIP_TARGET/PIP_ROOT make
//          it write the package's files into any host directory (~/.local:
//          a .pth there runs in every Python of the user).
//   low    `npx://PKG@x.TGZ` passes the version check (its archive test is
//          lower-case only; npm's is not): npm reads a file spec, and only
//          npm's own --allow-file=none refuses it.
//   low    the 1 MiB cap on what scripts print (adv9) is per cell, and an
//          install has a cell per package with scripts: six dependencies
//          that each print 2 MiB put 6 MiB into mcpcell's stderr (a client's log).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { PY_PROJECT, pipConfigHome, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { install } = scriptsHome('e2e-adv13-home');

const topPackage = (top, deps) => ({
  name: top, version: '1.0.0',
  manifest: { bin: { [top]: 'server.js' }, dependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])) },
  files: { 'server.js': '#!/usr/bin/env node\n' },
});

/** Bytes of disk the regular files below `dir` take. */
function diskBytes(dir) {
  let total = 0;
  if (!existsSync(dir)) return 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += statSync(path.join(e.parentPath ?? e.path, e.name)).blocks * 512;
  }
  return total;
}

test('adv13: a script cell puts several GiB on the host\'s disk in files of less than 1 GiB each (RLIMIT_FSIZE bounds a file, not the cell)', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv13-disk-top-${id}`;
  const a = `e2e-adv13-disk-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      // fallocate(1): instant, and the blocks are really taken; each below RLIMIT_FSIZE.
      manifest: { scripts: { install: 'for i in 1 2 3; do fallocate -l 1000M big$i.bin || exit 0; done; echo allocated-all' } },
      files: { 'index.js': '' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const pkgDir = path.join(installDir, 'node_modules', a);
  const tmp = r.stderr.match(/(\/\S+\/\.install-[^/\s]+)\//)?.[1];
  const taken = diskBytes(pkgDir);
  t.after(() => {
    rmSync(pkgDir, { recursive: true, force: true });
    if (tmp) rmSync(path.join(tmp, 'node_modules', a), { recursive: true, force: true });
  });
  t.diagnostic(`exit ${r.code}; ${taken} bytes in ${pkgDir}`);
  assert.ok(taken < (1 << 30), `the install published ${taken} bytes a script wrote into the host's cache (exit ${r.code})`);
  assert.doesNotMatch(r.stderr, /^allocated-all$/m, 'the script took 3000 MiB of the host\'s disk');
});

// The same with plain writes (fallocate is refused in script cells, so the
// budget is what stops this one): the cell is stopped once the package
// directory has grown past 1 GiB, and the install refused, saying so.
test('adv13 fix held: a script cell that writes past the disk budget (files below RLIMIT_FSIZE) is stopped and the install refused', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv13-diskw-top-${id}`;
  const a = `e2e-adv13-diskw-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { scripts: { install: 'for i in 1 2 3 4; do head -c 400M /dev/zero > big$i.bin || exit 0; done; echo wrote-all' } },
      files: { 'index.js': '' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const pkgDir = path.join(installDir, 'node_modules', a);
  t.after(() => rmSync(pkgDir, { recursive: true, force: true }));
  t.diagnostic(`exit ${r.code}; ${diskBytes(pkgDir)} bytes in ${pkgDir}`);
  assert.doesNotMatch(r.stderr, /^wrote-all$/m, 'the script wrote 1600 MiB into the host\'s cache');
  assert.notEqual(r.code, 0, 'the install went on');
  assert.match(r.stderr, /took more than 1024 MiB or 250000 files above its lowest use since this install's scripts began/, r.stderr);
  assert.ok(diskBytes(pkgDir) < (1 << 30), 'the package directory stayed');
});

/** npm's global config file, when it is under /usr (which every cell mounts). */
function globalNpmrcUnderUsr() {
  try {
    const file = execFileSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8', cwd: '/' }).trim();
    return file.startsWith('/usr/') && existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

test('adv13: npm\'s global npmrc under /usr (where a machine\'s registry token is set with `npm config set --global`) is readable in a server cell and in an install-script cell', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const npmrc = globalNpmrcUnderUsr();
  if (!npmrc) return t.skip('npm\'s global config is not under /usr on this host');
  const content = readFileSync(npmrc, 'utf8').trim();
  if (!content) return t.skip(`${npmrc} is empty`);
  const seen = [];
  // A server cell (the default profile).
  const r = await runMcpcell(['run', '--isolate', '--', '/bin/cat', npmrc], { input: '', guardMs: 30_000 });
  if (r.stdout.includes(content)) seen.push(`server cell: cat ${npmrc} -> ${JSON.stringify(r.stdout.trim())}`);
  // An install script of a dependency.
  const top = `e2e-adv13-npmrc-top-${id}`;
  const a = `e2e-adv13-npmrc-a-${id}`;
  const reg = await startPackageRegistry([
    { name: a, version: '1.0.0', manifest: { scripts: { install: `echo "GLOBAL-NPMRC[$(cat ${npmrc} | tr '\\n' ' ')]"` } }, files: { 'index.js': '' } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r: inst } = await install(top, reg);
  const line = inst.stderr.split('\n').find((l) => l.startsWith('GLOBAL-NPMRC['));
  if (line && line.includes(content)) seen.push(`install script: ${line}`);
  assert.deepEqual(seen, [], `the host npm's global config ${npmrc} is readable in cells`);
});

test('adv13: the 1 MiB cap on what install scripts print is per cell: a package with six dependencies that each print 2 MiB puts 6 MiB into mcpcell\'s stderr', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv13-flood-top-${id}`;
  const deps = Array.from({ length: 6 }, (_, i) => `e2e-adv13-flood-${i}-${id}`);
  const reg = await startPackageRegistry([
    ...deps.map((name) => ({
      name, version: '1.0.0',
      manifest: { scripts: { install: 'node flood.js' } },
      files: { 'flood.js': 'const b = Buffer.alloc(1 << 20, 0x41); b[b.length - 1] = 10; for (let i = 0; i < 2; i++) require("fs").writeSync(1, b);\n' },
    })),
    topPackage(top, deps),
  ]);
  t.after(() => reg.close());
  const { r } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  t.diagnostic(`stderr: ${r.stderr.length} bytes`);
  assert.ok(r.stderr.length < (4 << 20), `12 MiB of script output became ${r.stderr.length} bytes of mcpcell's stderr`);
});

test('adv13: the host\'s npm (outside every cell, even for an isolated run) is whatever an absolute PATH entry of mcpcell\'s environment names first: a repository\'s node_modules/.bin/npm runs as the user', {
  timeout: 60_000,
}, async () => {
  const repo = makeTempDir('adv13-repo');
  const bin = path.join(repo, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\necho "ADV13-HOST-NPM-RAN uid=$(id -u) $*" >&2\nexit 1\n');
  chmodSync(path.join(bin, 'npm'), 0o755);
  const home = makeTempDir('adv13-npm-home');
  const r = await runMcpcell(['run', '--isolate', `npx://e2e-adv13-hostnpm-${id}@1.0.0`], {
    input: '', cwd: repo,
    env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') },
    guardMs: 30_000,
  });
  assert.doesNotMatch(r.stderr, /ADV13-HOST-NPM-RAN/, `the repository's npm ran on the host, outside any cell:\n${r.stderr}`);
});

test('adv13: PIP_REQUIREMENT in mcpcell\'s environment names a requirements file whose `--no-binary :all:` beats --only-binary=:all:: the host pip builds a source distribution, running its code on the host, for an isolated uvx:// run', {
  timeout: 60_000,
}, async (t) => {
  const dir = makeTempDir('adv13-sdist');
  const marker = path.join(dir, 'ADV13-HOST-BUILD-RAN');
  // An sdist whose in-tree build backend (no build requirements, nothing to download) is its own code.
  const src = path.join(dir, 'pkg', 'e2e_adv13_sd-1.0');
  mkdirSync(src, { recursive: true });
  writeFileSync(path.join(src, 'pyproject.toml'), '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n[project]\nname = "e2e-adv13-sd"\nversion = "1.0"\n');
  writeFileSync(path.join(src, 'PKG-INFO'), 'Metadata-Version: 2.1\nName: e2e-adv13-sd\nVersion: 1.0\n');
  writeFileSync(path.join(src, 'backend.py'), `import os\nopen(${JSON.stringify(marker)}, "w").write(str(os.getuid()))\n` +
    'def get_requires_for_build_wheel(config_settings=None):\n    return []\n' +
    'def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n    raise RuntimeError("adv13")\n');
  const tgz = path.join(dir, 'e2e_adv13_sd-1.0.tar.gz');
  execFileSync('tar', ['-czf', tgz, '-C', path.join(dir, 'pkg'), 'e2e_adv13_sd-1.0']);
  const bytes = readFileSync(tgz);
  const server = http.createServer((req, res) => {
    if (req.url === '/simple/e2e-adv13-sd/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<a href="/files/e2e_adv13_sd-1.0.tar.gz">e2e_adv13_sd-1.0.tar.gz</a>\n');
    } else if (req.url === '/files/e2e_adv13_sd-1.0.tar.gz') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(bytes);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const req = path.join(dir, 'req.txt');
  writeFileSync(req, `--no-binary :all:\n--index-url http://127.0.0.1:${server.address().port}/simple/\n`);
  const home = makeTempDir('adv13-sdist-home');
  const r = await runMcpcell(['run', '--isolate', 'uvx://e2e-adv13-sd@1.0'], {
    input: '', env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'), PIP_REQUIREMENT: req },
    guardMs: 45_000,
  });
  t.diagnostic(r.stderr.split('\n').slice(-2).join('\n'));
  assert.ok(!existsSync(marker), `the sdist's build backend ran on the host (uid ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}), before any cell`);
});

test('adv13: PIP_PREFIX / PIP_TARGET in mcpcell\'s environment make the host pip install a uvx:// package\'s files into any host directory (e.g. ~/.local: a .pth there runs in every Python of the user, outside any cell)', {
  timeout: 60_000,
}, async (t) => {
  const idx = await startIndex(['1.0.0']);
  t.after(() => idx.close());
  const written = [];
  for (const name of ['PIP_PREFIX', 'PIP_TARGET']) {
    const { env } = pipConfigHome(idx.url, `adv13-${name.toLowerCase()}`);
    const where = path.join(makeTempDir(`adv13-${name.toLowerCase()}`), 'out');
    await runMcpcell(['install', `uvx://${PY_PROJECT}@1.0.0`], { input: '', env: { ...env, [name]: where }, guardMs: 45_000 });
    if (existsSync(where)) written.push(`${name}=${where}: ${readdirSync(where, { recursive: true }).filter((f) => f.endsWith('.py')).join(', ')}`);
  }
  assert.deepEqual(written, [], 'the host pip wrote the package outside mcpcell\'s cache');
});

test('adv13: `npx://PKG@x.TGZ` (and .Tar, .TAR.GZ) passes mcpcell\'s version check, which refuses only lower-case archive names; npm reads it as a file spec (npm-package-arg\'s test is case-insensitive) and only --allow-file=none stops it', {
  timeout: 60_000,
}, async () => {
  const home = makeTempDir('adv13-tgz-home');
  const passed = [];
  for (const spec of ['x.TGZ', 'x.Tar', 'x.TAR.GZ']) {
    const r = await runMcpcell(['run', '--dry-run', `npx://adv13-not-a-package@${spec}`], {
      input: '',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
        npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' },
      guardMs: 30_000,
    });
    if (!/not a version, range or tag/.test(r.stderr)) passed.push(`@${spec}: ${r.stderr.split('\n').filter((l) => /npm error code|mcpcell:/.test(l)).join(' | ')}`);
  }
  assert.deepEqual(passed, [], 'an archive name reached npm');
});
