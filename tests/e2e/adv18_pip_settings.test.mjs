// Adversary pass adv18: the host pip's settings after the adv16 fixes
// (source/pip_settings.cc NonIndexPipVariables / ParsePipConfigList,
// uvx_install.cc PipTool::Run: `pip config list` with
// _PIP_RUNNING_IN_SUBPROCESS=1 and --log /dev/null, the other runs with
// PIP_CONFIG_FILE=/dev/null and only the index keys as PIP_* variables).
//
// Held (these tests pass):
//   - spellings pip normalizes and mcpcell's allowlist does not know:
//     PIP___PYTHON / PIP___LOG (pip strips a leading "--" after mapping
//     "_" to "-": "--python" is `python`), pip.conf keys `--python` and
//     `log_file`: dropped / unused, nothing ran, nothing appended (the
//     allowlist compares ASCII names exactly, so no spelling reaches pip as
//     another option).
//   - pip.conf `[global] verbose = 3` (pip's INFO/DEBUG logging goes to
//     stdout, which mcpcell parses as the listing): no line of it forges a
//     key; and forging is no gain anyway (a key is only ever an index key,
//     which the file's writer sets directly).
// Not tested here (no finding): a section name holding "=" and quotes
// (`[global.index-url='X' #]`) makes a listed line mcpcell reads as
// global.index-url with a value of both quotes (FromRepr does not check
// that the inner quote is escaped); pip.conf's writer can set index-url
// directly, so no gain — but FromRepr should refuse an unescaped quote of
// the opening kind inside the repr.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ID = `${process.pid}${Date.now() % 100000}`;

function markerProgram(label) {
  const dir = makeTempDir(label);
  const marker = path.join(dir, 'ran');
  const prog = path.join(dir, 'python-of-the-attacker');
  writeFileSync(prog, `#!/bin/sh\necho "ran on the host as $(id -u): $*" > ${marker}\nexit 3\n`);
  chmodSync(prog, 0o755);
  return { prog, marker };
}

function homeWithPipConf(label, text) {
  const home = makeTempDir(label);
  mkdirSync(path.join(home, '.config', 'pip'), { recursive: true });
  writeReadableFile(path.join(home, '.config', 'pip', 'pip.conf'), text);
  return {
    home,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') },
  };
}

test('adv18 held: PIP___PYTHON and PIP___LOG (pip reads them as python and log) do not reach the host pip', { timeout: 90_000 }, async (t) => {
  const version = `18.${ID}.1`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const { prog, marker } = markerProgram('adv18-pip-dunder');
  const victim = path.join(makeTempDir('adv18-pip-dunder-log'), 'profile');
  writeFileSync(victim, 'own\n');
  const h = homeWithPipConf('adv18-pip-home1', `[global]\nindex-url = ${idx.url}\nretries = 0\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`],
    { input: '', env: { ...h.env, PIP___PYTHON: prog, PIP___LOG: victim }, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  assert.equal(r.code, 0, 'the install failed (test setup)');
  assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', 'PIP___PYTHON ran on the host');
  assert.equal(readFileSync(victim, 'utf8'), 'own\n', 'PIP___LOG made the host pip append to a file');
});

test('adv18 held: pip.conf `--python =`, `log_file =` and `verbose = 3` do nothing on the host', { timeout: 90_000 }, async (t) => {
  const version = `18.${ID}.2`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const { prog, marker } = markerProgram('adv18-pip-conf');
  const victim = path.join(makeTempDir('adv18-pip-conf-log'), 'bashrc');
  writeFileSync(victim, 'own\n');
  const h = homeWithPipConf('adv18-pip-home2',
    `[global]\nindex-url = ${idx.url}\nretries = 0\n--python = ${prog}\nlog_file = ${victim}\nverbose = 3\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`], { input: '', env: h.env, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  assert.equal(r.code, 0, 'the install failed (test setup)');
  assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', 'pip.conf\'s --python ran on the host');
  assert.equal(readFileSync(victim, 'utf8'), 'own\n', 'pip.conf\'s log_file made the host pip append to a file');
  assert.match(r.stderr, /not used by mcpcell's installs/, 'the unused keys were not named');
});
