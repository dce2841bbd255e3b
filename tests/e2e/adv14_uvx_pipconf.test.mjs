// Adversary pass adv14 (session 14): pip's config files for uvx:// installs.
// The adv13 fixes look at the environment: the host pip loses PIP_REQUIREMENT,
// PIP_PREFIX, PIP_TARGET... (src/source/uvx_install.cc Run), and an allow
// run is refused while HOME/XDG_CONFIG_HOME are not the account's or the
// account has a pip.conf (src/cli/launch_plan.cc WhyPipConfigIsNotPublic).
// pip reads the same settings from config files, in more places.
//
// Findings:
//   high   XDG_CONFIG_DIRS=DIR: pip reads DIR/pip/pip.conf (its "site"
//          config, after /etc/xdg); WhyPipConfigIsNotPublic does not look at
//          it. Its index-url serves the trusted uvx://PKG@V of an allow run,
//          installed and run with no cell.
//   high   a pip.conf's [install] section (the HOME or XDG_CONFIG_HOME of an
//          isolated run's environment, or XDG_CONFIG_DIRS) sets what the
//          dropped PIP_* variables set: `target`/`prefix`/`root`/`user` (the
//          host pip writes the package anywhere the user can: ~/.local, a
//          .pth there runs in every Python of the user), `requirement` (a
//          file whose --no-binary beats --only-binary: setup.py on the host).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
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
const ROOT = makeTempDir('adv14-pipconf');
const ID = `${process.pid}${Date.now() % 100000}`;
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', ...extra });
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function trusting(source) {
  const p = path.join(ROOT, `${n++}-policy.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

test('adv14: XDG_CONFIG_DIRS names a pip.conf whose index-url serves a trusted uvx:// package, installed and run with no cell', {
  timeout: 90_000,
}, async (t) => {
  const version = `14.${ID}.1`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const entry = path.join(ACCOUNT_CACHE, 'uvx', `${PY_PROJECT}@${version}`);
  cleanup.push(entry);
  const dirs = makeTempDir('adv14-xdgdirs');
  mkdirSync(path.join(dirs, 'pip'));
  writeReadableFile(path.join(dirs, 'pip', 'pip.conf'), `[global]\nindex-url = ${idx.url}\nretries = 0\n`);
  const r = await runMcpcell(['run', '--policy', trusting(`uvx://${PY_PROJECT}@${version}`), `uvx://${PY_PROJECT}@${version}`],
    { input: '', env: env({ XDG_CONFIG_DIRS: dirs }), guardMs: 55_000 });
  rmSync(entry, { recursive: true, force: true });
  const fetched = idx.requests.some((q) => q.includes('.whl'));
  t.diagnostic(`index asked: ${idx.requests.join(', ')}`);
  assert.ok(!(fetched && /WITHOUT a cell/.test(r.stderr)), `the XDG_CONFIG_DIRS pip.conf's index served the trusted package, run with no cell:\n${r.stderr}`);
});

test('adv14: a pip.conf [install] target= (HOME of an isolated run) makes the host pip write the package outside the cache (PIP_TARGET is dropped, the config key is not)', {
  timeout: 90_000,
}, async (t) => {
  const version = `14.${ID}.2`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const home = makeTempDir('adv14-pip-home');
  const target = path.join(makeTempDir('adv14-pip-target'), 'out');
  mkdirSync(path.join(home, '.config', 'pip'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = ${idx.url}\nretries = 0\n[install]\ntarget = ${target}\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`],
    { input: '', env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') }, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}; index asked: ${idx.requests.join(', ')}\n${r.stderr}`);
  const wrote = existsSync(target) ? readdirSync(target) : [];
  assert.deepEqual(wrote, [], `the host pip wrote the package into ${target}: ${wrote.join(', ')}`);
  // The index-url of the same file is used, and the key that is not is named.
  assert.ok(idx.requests.some((q) => q.includes('.whl')), `the pip.conf's index-url was not used: ${idx.requests.join(', ')}`);
  assert.match(r.stderr, /pip\.conf's install\.target not used by mcpcell's installs/);
});
