// Adversary tests against uvx:// sources (issue 14 item 9): pip runs on the
// host, outside every cell, so nothing a cell can write may decide what that
// pip (or the Python it runs under) does, and nothing the index config holds
// may be read by a cell. A failing test is a finding (report of branch adv2).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const hostEnv = (home) => ({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') });

test('a .pth a cell plants in the user site (--write ~/.local) does not run on the host at the next uvx:// install', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!existsSync('/usr/bin/python3')) return t.skip('no /usr/bin/python3');
  const home = makeTempDir('advpth-home');
  const local = path.join(home, '.local');
  mkdirSync(local);
  chmodSync(local, 0o777);  // writable by the cell's uid as root, the user's own as a user
  const env = hostEnv(home);
  const site = spawnSync('/usr/bin/python3', ['-c', 'import site; print(site.getusersitepackages())'], { encoding: 'utf8', env }).stdout.trim();
  assert.ok(site.startsWith(local), site);
  const markDir = makeTempDir('advpth-mark');  // never granted to any cell
  const mark = path.join(markDir, 'pwned');
  const pth = `import os; open(${JSON.stringify(mark)}, "w").write("host uid %d" % os.getuid())`;
  const plant = await runInCell(['--write', local], ['/bin/sh', '-c', `mkdir -p ${site} && printf '%s\\n' '${pth}' > ${site}/zz_adv.pth`], { env });
  // The grant is refused, naming the user site (branch fixpy) ...
  assert.notEqual(plant.code, 0, 'a cell was granted --write over the user site-packages');
  assert.match(plant.stderr, /user site-packages/, plant.stderr);
  // ... and a .pth already there (an older grant, another tool) does not run
  // either: the host Python is isolated (-I).
  mkdirSync(site, { recursive: true });
  writeReadableFile(path.join(site, 'zz_adv.pth'), `${pth}\n`);
  // Any uvx:// launch: pip runs on the host before the index is even reached.
  await runMcpcell(['run', '--relay=off', '--install-timeout=30s', 'uvx://adv-nonexistent-pkg'], { env });
  assert.equal(existsSync(mark), false,
    `code a cell planted in ${site} ran on the host, outside every cell: ${existsSync(mark) ? readFileSync(mark, 'utf8') : ''}`);
});

test('the user\'s pip.conf (index tokens) is hidden from a cell granted ~/.config or ~', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const home = makeTempDir('advpipconf');
  for (const dir of [path.join(home, '.config', 'pip'), path.join(home, '.pip')]) {
    mkdirSync(dir, { recursive: true });
    writeReadableFile(path.join(dir, 'pip.conf'), '[global]\nindex-url = https://alice:ADV-SECRET-TOKEN@pypi.example.invalid/simple\n');
  }
  chmodSync(path.join(home, '.config'), 0o755);
  for (const grant of [path.join(home, '.config'), home]) {
    const r = await runInCell(['--read', grant], ['/bin/sh', '-c',
      `cat ${home}/.config/pip/pip.conf ${home}/.pip/pip.conf 2>/dev/null; true`], { env: hostEnv(home) });
    assert.doesNotMatch(r.stdout, /ADV-SECRET-TOKEN/, `--read ${grant}: the cell read the pip index token`);
  }
});

test('more pip-option and direct-reference spellings are refused before pip runs', { timeout: 60_000 }, async () => {
  const home = makeTempDir('advnames');
  const bad = ['uvx://git+https://127.0.0.1:9/x', 'uvx://file:/tmp/x', 'uvx://-e.', 'uvx://foo @ file:///tmp/x',
    'uvx://foo@１.0', 'uvx://foo@1.0 --pre', 'uvx://foo@1.0\t--index-url=http://127.0.0.1:9/', 'uvx://foo==1.0==2.0',
    'uvx://foo@1.0#egg=bar', 'uvx://.foo', 'uvx://foo.'];
  for (const source of bad) {
    const r = await runMcpcell(['run', '--dry-run', source], { env: hostEnv(home) });
    assert.equal(r.code, EXIT.usage, `${JSON.stringify(source)} was accepted: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /installing|pip install/, source);
  }
});

test('a pip.conf a cell writes (--write ~/.config) does not choose the index of the next uvx:// install', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const index = await startIndex(['6.6']);  // the cell's index, serving its own "release"
  t.after(() => index.close());
  const home = makeTempDir('advpipidx-home');
  const config = path.join(home, '.config');
  mkdirSync(config);
  chmodSync(config, 0o777);
  const env = hostEnv(home);
  const conf = `[global]\nindex-url = ${index.url}\nretries = 0\n`;
  mkdirSync(path.join(config, 'pip'));
  chmodSync(path.join(config, 'pip'), 0o777);
  mkdirSync(path.join(home, '.pip'));
  chmodSync(path.join(home, '.pip'), 0o777);
  const xdg = makeTempDir('advpipidx-xdg');
  chmodSync(xdg, 0o777);
  const linked = makeTempDir('advpipidx-linked');
  mkdirSync(path.join(linked, '.config'));
  symlinkSync(xdg, path.join(linked, '.config', 'pip'));
  // Every grant over a pip config the host's pip reads is refused, naming it.
  for (const [grant, file, extra] of [[config, `${config}/pip/pip.conf`, {}], [path.join(config, 'pip'), `${config}/pip/pip.conf`, {}],
    [path.join(home, '.pip'), `${home}/.pip/pip.conf`, {}], [xdg, `${xdg}/pip/pip.conf`, { XDG_CONFIG_HOME: xdg }],
    [xdg, `${xdg}/adv.conf`, { PIP_CONFIG_FILE: `${xdg}/adv.conf` }],
    [xdg, `${xdg}/rel/pip/pip.conf`, { XDG_CONFIG_HOME: `${xdg.slice(1)}/rel` }],  // relative: pip runs in /
    [xdg, `${linked}/.config/pip/pip.conf`, { HOME: linked }]]) {  // ~/.config/pip -> the granted dir
    const plant = await runInCell(['--write', grant], ['/bin/sh', '-c', `mkdir -p ${path.dirname(file)} && printf '${conf}' > ${file}`],
      { env: { ...env, ...extra } });
    assert.notEqual(plant.code, 0, `--write ${grant} was granted: the cell wrote ${file}`);
    assert.match(plant.stderr, /pip|PIP_CONFIG_FILE/, plant.stderr);
    assert.ok(plant.stderr.includes(file), plant.stderr);
  }
  const r = await runMcpcell(['install', '--install-timeout=60s', `uvx://${PY_PROJECT}`], { env });
  const fetched = index.requests.filter((q) => q.includes('.whl'));
  assert.deepEqual(fetched, [],
    `the host's pip installed from the index a cell wrote into ${config}/pip/pip.conf (exit ${r.code}): ${fetched.join(', ')}`);
});

/** An index serving only a source distribution whose setup.py writes `mark`: {url, requests, close}. */
async function sdistIndex(mark) {
  const dir = makeTempDir('advsdist-src');
  const root = path.join(dir, 'adv_sdist-1.0');
  mkdirSync(root);
  writeReadableFile(path.join(root, 'setup.py'),
    `open(${JSON.stringify(mark)}, "w").write("setup.py ran on the host")\nfrom setuptools import setup\nsetup(name="adv-sdist", version="1.0")\n`);
  writeReadableFile(path.join(root, 'PKG-INFO'), 'Metadata-Version: 2.1\nName: adv-sdist\nVersion: 1.0\n');
  assert.equal(spawnSync('tar', ['-czf', path.join(dir, 'adv_sdist-1.0.tar.gz'), '-C', dir, 'adv_sdist-1.0']).status, 0);
  const tarball = readFileSync(path.join(dir, 'adv_sdist-1.0.tar.gz'));
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    if (req.url === '/simple/adv-sdist/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><a href="/files/adv_sdist-1.0.tar.gz">adv_sdist-1.0.tar.gz</a></body></html>');
    } else if (req.url === '/files/adv_sdist-1.0.tar.gz') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(tarball);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/simple/`, requests, close: () => new Promise((r) => server.close(r)) };
}

test('an index offering only a source distribution: setup.py never runs on the host; the refusal says why', { timeout: 120_000 }, async (t) => {
  const markDir = makeTempDir('advsdist-mark');
  const mark = path.join(markDir, 'ran');
  const index = await sdistIndex(mark);
  t.after(() => index.close());
  const home = makeTempDir('advsdist-home');
  mkdirSync(path.join(home, '.config', 'pip'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = ${index.url}\nretries = 0\n`);
  for (const source of ['uvx://adv-sdist', 'uvx://adv-sdist@1.0']) {
    const r = await runMcpcell(['install', '--install-timeout=60s', source], { env: hostEnv(home) });
    assert.notEqual(r.code, 0, `${source} installed from an sdist: ${r.stderr}`);
    assert.match(r.stderr, /only wheels/, r.stderr);
    assert.equal(existsSync(mark), false, `${source}: setup.py ran on the host`);
  }
  assert.ok(!index.requests.some((q) => q.endsWith('.tar.gz')), `the sdist was even downloaded: ${index.requests.join(', ')}`);
});

// `client wrap` turns `uvx NAME` into uvx://NAME, but uvx reads its index
// from UV_INDEX_URL / uv.toml and mcpcell's pip does not: an entry that
// pointed uvx at a private index now resolves NAME on the index pip.conf
// names (PyPI by default) — dependency confusion. Index A stands for the
// private index the entry names, index B for the public one.
test('a wrapped `uvx NAME` entry with UV_INDEX_URL installs from that index, or is not wrapped', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const priv = await startIndex(['1.0']);
  const pub = await startIndex(['6.6']);
  t.after(async () => { await priv.close(); await pub.close(); });
  const home = makeTempDir('advuvindex');
  mkdirSync(path.join(home, '.config', 'pip'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = ${pub.url}\nretries = 0\n`);
  const config = path.join(home, 'claude.json');
  writeReadableFile(config, JSON.stringify({ mcpServers: { internal: { command: 'uvx', args: [PY_PROJECT], env: { UV_INDEX_URL: priv.url } } } }));
  const wrap = await runMcpcell(['client', 'wrap', 'claude-desktop', '--file', config], { env: hostEnv(home) });
  assert.equal(wrap.code, 0, wrap.stderr);
  const entry = JSON.parse(readFileSync(config, 'utf8')).mcpServers.internal;
  if (!entry.args.some((a) => a.startsWith('uvx://'))) return;  // left as it was: fine
  const r = await runMcpcell(entry.args, { env: { ...hostEnv(home), ...entry.env }, input: '' });
  const fromPublic = pub.requests.filter((q) => q.includes('.whl'));
  assert.deepEqual(fromPublic, [],
    `the wrapped entry (UV_INDEX_URL = the private index) installed ${PY_PROJECT} from the public index: ${fromPublic.join(', ')} (exit ${r.code})`);
});

// The cache check is made against this run's XDG_CACHE_HOME: a run with
// another one (another client's environment) may grant --write ~/.cache, and
// the cell plants a venv where the default environment's uvx cache is.
test('a venv planted in the default uvx cache by a run with another XDG_CACHE_HOME is not run by the next launch', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const home = makeTempDir('advxdg-home');
  const cacheDir = path.join(home, '.cache');
  mkdirSync(cacheDir);
  chmodSync(cacheDir, 0o777);
  const other = makeTempDir('advxdg-other');
  const venv = path.join(cacheDir, 'mcpcell', 'uvx', 'adv-planted@1.0');
  const py = spawnSync('/usr/bin/python3', ['-c', 'import sys,os; print(os.path.realpath(sys.executable)); print("python%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).stdout.trim().split('\n');
  const dist = path.join(venv, 'lib', py[1], 'site-packages', 'adv_planted-1.0.dist-info');
  const sh = [
    `mkdir -p ${venv}/bin ${dist}`,
    `printf 'home = /usr/bin\\n' > ${venv}/pyvenv.cfg`,
    `ln -s ${py[0]} ${venv}/bin/${py[1]}`,
    `printf '[console_scripts]\\nadv-planted = x:main\\n' > ${dist}/entry_points.txt`,
    `printf 'print("PLANTED-BY-ANOTHER-CELL")\\n' > ${venv}/bin/adv-planted`,
    `chmod -R a+rX ${cacheDir}/mcpcell`,
  ].join(' && ');
  const plant = await runInCell(['--write', cacheDir], ['/bin/sh', '-c', sh], { env: { ...hostEnv(home), XDG_CACHE_HOME: other } });
  if (plant.code !== 0) {  // refused: the check held, and says which cache
    assert.match(plant.stderr, /default package cache/, plant.stderr);
    assert.ok(plant.stderr.includes(path.join(cacheDir, 'mcpcell')), plant.stderr);
    return;
  }
  const r = await runMcpcell(['run', '--relay=off', 'uvx://adv-planted@1.0'], { env: hostEnv(home), input: '' });
  assert.doesNotMatch(r.stdout, /PLANTED-BY-ANOTHER-CELL/, `a cell of another run planted the venv the default run executed: ${r.stderr}`);
});

// uvx also reads its index from uv.toml, which mcpcell's pip does not: with
// one that names an index, `client wrap` leaves every `uvx` entry (and the
// UV_* entry above), naming the file and what to do.
test('client wrap leaves uvx entries when uv.toml names an index, or the entry sets UV_*', { timeout: 60_000 }, async () => {
  const home = makeTempDir('advuvtoml');
  mkdirSync(path.join(home, '.config', 'uv'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'uv', 'uv.toml'), '[[index]]\nurl = "https://pypi.internal/simple"\n');
  const config = path.join(home, 'claude.json');
  const before = JSON.stringify({ mcpServers: { a: { command: 'uvx', args: ['internal-tool'] } } });
  writeReadableFile(config, before);
  const wrap = await runMcpcell(['client', 'wrap', 'claude-desktop', '--file', config], { env: hostEnv(home) });
  assert.equal(wrap.code, 0, wrap.stderr);
  assert.equal(readFileSync(config, 'utf8'), before, 'the uvx entry was rewritten');
  assert.ok(wrap.stderr.includes(path.join(home, '.config', 'uv', 'uv.toml')), wrap.stderr);
  const home2 = makeTempDir('advuvenv');
  const config2 = path.join(home2, 'claude.json');
  const before2 = JSON.stringify({ mcpServers: { a: { command: 'uvx', args: ['internal-tool'], env: { UV_EXTRA_INDEX_URL: 'https://x/simple' } } } });
  writeReadableFile(config2, before2);
  const wrap2 = await runMcpcell(['client', 'wrap', 'claude-desktop', '--file', config2], { env: hostEnv(home2) });
  assert.equal(wrap2.code, 0, wrap2.stderr);
  assert.equal(readFileSync(config2, 'utf8'), before2, 'the uvx entry with UV_EXTRA_INDEX_URL was rewritten');
  assert.match(wrap2.stderr, /UV_EXTRA_INDEX_URL/, wrap2.stderr);
});
