// Adversary pass on npx:// installs (docs/THREAT_MODEL.md "Host programs
// mcpcell runs"): npm runs on the host, outside every cell, and whatever it
// reads must be out of every cell's reach. Its package cache (~/.npm, the
// default `cache`) is not on that list: npm serves a packument and a
// tarball from it without asking the registry while the stored response's
// Cache-Control max-age holds (the registry's own is 300 s; a planted one
// says what it likes). A cell granted `--write ~/.npm` (a server that runs
// npm itself wants a warm cache) writes the entries; the next npx:// install
// of another server installs the cell's code, which then runs as that server,
// with its secrets and grants.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

import { runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

function tarball(name, body) {
  const dir = makeTempDir('adv-npx-pkg');
  mkdirSync(path.join(dir, 'package'));
  writeReadableFile(path.join(dir, 'package', 'package.json'),
    JSON.stringify({ name, version: '1.0.0', bin: { [name]: 'server.js' }, license: 'MIT' }));
  writeReadableFile(path.join(dir, 'package', 'server.js'), `#!/usr/bin/env node\n${body}\n`);
  const file = path.join(dir, 'p.tgz');
  execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
  return readFileSync(file);
}

// A registry serving `name@1.0.0` with `tgz` on `port` (0: any), with `maxAge` as Cache-Control.
async function registry(name, tgz, port, maxAge, dependencies = undefined) {
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${server.address().port}`;
    const cc = { 'cache-control': `public, max-age=${maxAge}` };
    if (req.url.endsWith('.tgz')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', ...cc });
      return res.end(tgz);
    }
    const dist = {
      tarball: `${base}/${name}/-/${name}-1.0.0.tgz`,
      integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
      shasum: createHash('sha1').update(tgz).digest('hex'),
    };
    const doc = { name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name, version: '1.0.0', bin: { [name]: 'server.js' }, dependencies, dist } } };
    res.writeHead(200, { 'content-type': 'application/json', ...cc });
    res.end(JSON.stringify(doc));
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

test('adv npx: a cell with --write ~/.npm cannot choose the code the next npx:// install puts in place', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `adv-npx-${randomBytes(4).toString('hex')}`;
  const home = makeTempDir('adv-npx-home');
  mkdirSync(path.join(home, '.npm'));
  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8',
    npm_config_update_notifier: 'false', npm_config_fetch_retries: '0',
  };

  // What the hostile server brings along: cache entries for the victim's
  // registry URL (built here with npm against a registry on the same port).
  const evil = await registry(name, tarball(name, 'console.log("ADV-NPX-CACHE-CODE")'), 0, 999999999);
  const url = `http://127.0.0.1:${evil.port}/`;
  const planted = makeTempDir('adv-npx-planted');
  // Asynchronously: the registry answering npm lives in this process.
  await promisify(execFile)('npm', ['install', '--prefix', makeTempDir('adv-npx-scratch'), '--cache', planted, '--registry', url,
    '--no-audit', '--no-fund', '--ignore-scripts', `${name}@1.0.0`], { env });
  execFileSync('chmod', ['-R', 'a+rX', planted]);
  await evil.close();
  const honest = await registry(name, tarball(name, 'process.stdin.pipe(process.stdout)'), evil.port, 300);
  t.after(() => honest.close());

  // The hostile cell: allowed to write ~/.npm, it copies its entries there.
  const cell = await runInCell(['--write', path.join(home, '.npm'), '--read', planted],
    ['/bin/cp', '-r', path.join(planted, '_cacache'), path.join(home, '.npm')], { env });
  assert.equal(cell.code, 0, `the cell ran: ${cell.stderr}`);

  // The next install of that package, from the user's registry.
  const r = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: { ...env, npm_config_registry: url }, guardMs: 120_000 });
  if (r.code !== 0) {
    // Refusing the grant or the install, naming the cache, is a fix too.
    assert.match(r.stderr + cell.stderr, /\.npm/, r.stderr);
    return;
  }
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  const dir = readdirSync(npx).find((d) => d.startsWith(name));
  const code = readFileSync(path.join(npx, dir, 'node_modules', name, 'server.js'), 'utf8');
  assert.doesNotMatch(code, /ADV-NPX-CACHE-CODE/, `the install put the cell's code in place:\n${r.stderr}`);
});

// npm runs git on the host for a git dependency, with the caller's git
// config: `core.hooksPath` there makes git run a hook after the clone's
// checkout, outside every cell (--ignore-scripts is npm's, not git's). A
// cell granted `--write ~/.config/git` writes that config.
test('adv npx: a cell with --write ~/.config/git cannot make the next npx:// install run its hook on the host', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `adv-npxgit-${randomBytes(4).toString('hex')}`;
  const home = makeTempDir('adv-npxgit-home');
  const gitDir = path.join(home, '.config', 'git');
  mkdirSync(gitDir, { recursive: true });
  const out = makeTempDir('adv-npxgit-out');
  const marker = path.join(out, 'hook-ran');
  const repo = makeTempDir('adv-npxgit-repo');
  writeReadableFile(path.join(repo, 'package.json'), JSON.stringify({ name: 'gitdep', version: '1.0.0', license: 'MIT' }));
  const git = (...a) => execFileSync('git', ['-C', repo, '-c', 'user.email=a@b', '-c', 'user.name=a', ...a]);
  git('init', '-q', '.');
  git('add', '.');
  git('commit', '-qm', 'x');
  execFileSync('chmod', ['-R', 'a+rX', repo]);
  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8',
    npm_config_update_notifier: 'false', npm_config_fetch_retries: '0',
  };
  const reg = await registry(name, tarball(name, 'process.stdin.pipe(process.stdout)'), 0, 300,
    { gitdep: `git+file://${repo}` });
  t.after(() => reg.close());

  const hook = `#!/bin/sh\necho "$(id -u)" > ${marker}\n`;
  const cell = await runInCell(['--write', gitDir],
    ['/bin/sh', '-c', `mkdir -p ${gitDir}/hooks && printf '${hook}' > ${gitDir}/hooks/post-checkout && ` +
      `chmod 755 ${gitDir}/hooks/post-checkout && printf '[core]\\n\\thooksPath = ${gitDir}/hooks\\n' > ${gitDir}/config`],
    { env });
  if (cell.code !== 0) {
    // Refusing the grant, naming git's config, is the fix.
    assert.match(cell.stderr, /git/, cell.stderr);
    return;
  }
  const r = await runMcpcell(['install', `npx://${name}@1.0.0`],
    { env: { ...env, npm_config_registry: `http://127.0.0.1:${reg.port}/` }, guardMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(marker), `the cell's git hook ran on the host as uid ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''}:\n${r.stderr}`);
});
