// Adversary pass adv16: the host pip of a uvx:// install after the pip.conf
// fix (src/source/uvx_install.cc PipTool::Run / Settings, pip_settings.cc).
//
// Findings:
//   HIGH  pip.conf `[global] python = PROG` runs PROG on the host during
//         `mcpcell install uvx://...` (and any isolated uvx:// run's install).
//         The fix gives PIP_CONFIG_FILE=/dev/null only to the runs with a pip
//         `command` ("index", "install"); the first host pip run, `pip config
//         list` (Settings()), reads every pip.conf as before, and pip's general
//         option --python (pip >= 22.3, cli/main_parser.py) re-executes pip as
//         `PROG __pip-runner__.py config list` before listing anything. A
//         pip.conf is where an attacker who controls HOME/XDG_CONFIG_HOME/
//         XDG_CONFIG_DIRS (a client config) or a granted ~/.config puts it.
//   HIGH  PIP_PYTHON=PROG in mcpcell's environment does the same: the drop
//         list (PYTHON, _PIP_, PIP_REQUIREMENT, ...) matches by prefix and
//         "PYTHON" is no prefix of "PIP_PYTHON". It reaches `pip config list`
//         and `pip index versions` (neither has --python on its command line;
//         `pip install` has, and the command line wins).
//   MED   pip.conf `[global] log = FILE` (and PIP_LOG / PIP_LOG_FILE) make
//         the host pip append its debug log to any file the user can write
//         (~/.bashrc, ~/.profile): the `pip config list` run reads the config
//         file; PIP_LOG is not dropped for any run.
// Suggested fix: run `pip config list` with PIP_CONFIG_FILE unset but every
// PIP_* variable dropped and `--python` impossible (drop the whole PIP_
// prefix except the index keys, or read the pip.conf files with
// configparser in a python -I -c of our own), and pass
// `--python` only where wanted; drop PIP_PYTHON, PIP_LOG*, PIP_LOCAL_LOG.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ID = `${process.pid}${Date.now() % 100000}`;

/** A program that records that it ran (argv) into `marker`, then fails. */
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

test('adv16: pip.conf [global] python= runs a program of the attacker on the host (pip config list reads the config)', {
  timeout: 90_000,
}, async (t) => {
  const version = `16.${ID}.1`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const { prog, marker } = markerProgram('adv16-pip-python');
  const h = homeWithPipConf('adv16-pip-home', `[global]\nindex-url = ${idx.url}\nretries = 0\npython = ${prog}\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`], { input: '', env: h.env, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  assert.equal(ran, '', `pip.conf's python= ran on the host: ${ran}`);
});

test('adv16: PIP_PYTHON in mcpcell\'s environment runs a program of the attacker on the host (not dropped: "PYTHON" is no prefix of it)', {
  timeout: 90_000,
}, async (t) => {
  const version = `16.${ID}.2`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const { prog, marker } = markerProgram('adv16-pip-python-env');
  const h = homeWithPipConf('adv16-pip-home2', `[global]\nindex-url = ${idx.url}\nretries = 0\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`],
    { input: '', env: { ...h.env, PIP_PYTHON: prog }, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  assert.equal(ran, '', `PIP_PYTHON ran on the host: ${ran}`);
});

test('adv16: pip.conf [global] log= makes the host pip append to any file of the user (outside the venv)', {
  timeout: 90_000,
}, async (t) => {
  const version = `16.${ID}.3`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const victim = path.join(makeTempDir('adv16-pip-log'), 'bashrc');
  writeFileSync(victim, '# the user\'s own\n');
  const h = homeWithPipConf('adv16-pip-home3', `[global]\nindex-url = ${idx.url}\nretries = 0\nlog = ${victim}\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`], { input: '', env: h.env, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  const text = readFileSync(victim, 'utf8');
  assert.equal(text, '# the user\'s own\n', `the host pip appended to ${victim}:\n${text.slice(0, 400)}`);
});

test('adv16: PIP_LOG in mcpcell\'s environment makes the install\'s host pip append to any file', {
  timeout: 90_000,
}, async (t) => {
  const version = `16.${ID}.4`;
  const idx = await startIndex([version]);
  t.after(() => idx.close());
  const victim = path.join(makeTempDir('adv16-pip-log2'), 'profile');
  writeFileSync(victim, '# the user\'s own\n');
  const h = homeWithPipConf('adv16-pip-home4', `[global]\nindex-url = ${idx.url}\nretries = 0\n`);
  const r = await runMcpcell(['install', `uvx://${PY_PROJECT}@${version}`],
    { input: '', env: { ...h.env, PIP_LOG: victim }, guardMs: 55_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  const text = readFileSync(victim, 'utf8');
  assert.equal(text, '# the user\'s own\n', `the host pip appended to ${victim}:\n${text.slice(0, 400)}`);
});

after(() => {
  // `mcpcell install` with XDG_CACHE_HOME in the test's HOME: the entries go
  // with the temp dirs (removeTempDirs).
  rmSync(path.join('/tmp', `adv16-none-${ID}`), { recursive: true, force: true });
});
