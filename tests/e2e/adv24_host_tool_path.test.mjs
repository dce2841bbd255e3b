// Adversary pass adv24 on 5f04c5e (the host npm and node are not looked up in
// a PATH entry inside a node_modules directory). Each test below FAILED on
// main at 5f04c5e and is marked todo so the suite stays green.
//
// HIGH: the fix keys on one directory name. HostToolPath
// (src/source/host_tool.cc:155, `if (InsidePackages(dir) ||
// InsidePackages(real)) continue;`) drops only PATH entries with a
// `node_modules` component; every other bin directory that comes with a
// repository or its dependencies still chooses the host npm that installs
// npx:// packages, run as the user outside any cell (isolated runs too):
//   - ${workspaceFolder}/.venv/bin, what a client's env block puts first for
//     a Python server ("PATH": "${workspaceFolder}/.venv/bin:${env:PATH}"):
//     every Python dependency the venv installed puts its console scripts
//     there, and a `[project.scripts] npm = ...` is one;
//   - a repository's own bin/ (or scripts/, tools/, .bin) on PATH, a file
//     the repository ships.
//   Reproduce: PATH=$REPO/.venv/bin:/usr/bin:/bin mcpcell run --isolate
//   npx://any@1.0.0 with $REPO/.venv/bin/npm a script: it runs as the user
//   ("ADV24-HOST-NPM-RAN uid=0 config get globalconfig ...").
//   (node itself held: host_run.cc:63-66 puts the npm's own directory first
//   on the PATH its `#!/usr/bin/env node` searches; python is absolute.)
// Suggested fix: do not take the host npm from the PATH by name at all
// without a check on what it is: accept only an `npm` whose real path is an
// npm package's own bin/npm-cli.js (…/lib/node_modules/npm/bin/npm-cli.js)
// in a directory no cell writes and that is not inside a working tree (no
// ancestor holding .git) or a venv (no ancestor holding pyvenv.cfg); or drop
// PATH entries inside a git working tree, a venv, or the client's cwd as
// well as node_modules (fail closed: "set PATH to your npm's directory").
//
// Bounded: one short launch per case; no registry is reached (the planted
// npm exits 1 at its first call).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
after(removeTempDirs);

const CASES = [
  { label: 'a Python venv\'s bin (a dependency\'s console script named npm)', bin: '.venv/bin', venv: true },
  { label: 'a repository\'s own bin directory', bin: 'bin', git: true },
  // The same hole from inside a cell: a server granted --write on the
  // workspace (a filesystem server) plants .venv/bin/npm; the next npx://
  // launch, whose own cell writes nothing there, runs it on the host.
  { label: 'a venv\'s bin another launch\'s cell wrote', bin: '.venv/bin', venv: true, byCell: true },
];

for (const c of CASES) {
  test(`adv24: the host npm comes from ${c.label} on the client's PATH, run as the user outside any cell`, {
    timeout: 60_000,
  }, async () => {
    const repo = makeTempDir('adv24-repo');
    if (c.git) mkdirSync(path.join(repo, '.git'));
    const bin = path.join(repo, c.bin);
    mkdirSync(bin, { recursive: true });
    if (c.venv) writeFileSync(path.join(repo, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\ninclude-system-site-packages = false\n');
    const npm = '#!/bin/sh\necho "ADV24-HOST-NPM-RAN uid=$(id -u) $*" >&2\nexit 1\n';
    const home = makeTempDir('adv24-npm-home');
    if (c.byCell) {
      const w = await runMcpcell(['run', '--isolate', '--relay=off', '--write', repo, '--', '/bin/sh', '-c',
        'printf "%s" "$2" > "$1/npm" && chmod 755 "$1/npm"', 'sh', bin, npm], {
        input: '', env: { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' }, guardMs: 30_000,
      });
      assert.equal(w.code, 0, `the writing cell (test setup): ${w.stderr.slice(-600)}`);
    } else {
      writeFileSync(path.join(bin, 'npm'), npm);
      chmodSync(path.join(bin, 'npm'), 0o755);
    }
    const r = await runMcpcell(['run', '--isolate', `npx://e2e-adv24-hostnpm-${id}@1.0.0`], {
      input: '', cwd: repo,
      env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache') },
      guardMs: 30_000,
    });
    assert.doesNotMatch(r.stderr, /ADV24-HOST-NPM-RAN/, `the repository's ${c.bin}/npm ran on the host, outside any cell:\n${r.stderr}`);
  });
}
