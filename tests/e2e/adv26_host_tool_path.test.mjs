// Adversary pass adv26 on 03191d7 (adv24's fix: the host npm is not taken
// from a PATH entry inside a Python venv or at/below the client's working
// directory, "unless / or $HOME or above"). Each test below FAILED on main
// at 03191d7 and is marked todo so the suite stays green.
//
// HIGH (same impact as adv24: the repository's own `npm` runs as the user,
// outside any cell, on every npx:// install, --isolate or not): the
// "project" is only ever the client's working directory, and it is judged
// against $HOME as mcpcell's own environment gives it. In
// WithoutProjectEntries (src/source/host_tool.cc:182-188):
//   std::string real_home = ... ::realpath(home.c_str(), buf) ...;
//   if (project == "/" || (!real_home.empty() && PathAtOrBelow(real_home, project))) project.clear();
// so the whole working-directory rule is switched off when
//   - the client starts the server with cwd "/" or the home (a client with
//     no workspace folder, a desktop app; or a config's "cwd" entry), while
//     the env block still puts "${workspaceFolder}/bin" first on PATH: a
//     repository's bin/ (a git working tree) is kept;
//   - the env block that sets PATH also sets HOME to the workspace (or any
//     directory inside it): the project is then "the home or above it";
//   - the cwd is a subdirectory of the repository (a monorepo's package, a
//     config's "cwd": "${workspaceFolder}/packages/server", a client started
//     one level down): ${repo}/bin is not at/below the cwd, so it is kept;
//   - HOME is relative ("." or "bin"): realpath() resolves it against the
//     cwd, so it is inside the project, which is then "above the home"
//     (host_run.cc:42-45 passes getenv("HOME") unchecked; Homes() in the same
//     file already ignores a relative $HOME).
//   Reproduce: cd /; PATH=$REPO/bin:/usr/bin:/bin mcpcell run --isolate
//   npx://x@1.0.0 with $REPO/.git and an executable $REPO/bin/npm: it runs
//   ("ADV26-HOST-NPM-RAN uid=0 ..."). Same with cwd $REPO and HOME=$REPO or HOME=.
// Suggested fix: judge "the home" by the password database (getpwuid), not
// by $HOME (a variable the same env block sets), and ignore a relative one;
// and do not depend on the cwd alone: drop a PATH entry inside a git
// working tree (an ancestor holding .git) or a venv/conda env (pyvenv.cfg,
// conda-meta) wherever the cwd is, as adv24 suggested — fail closed with
// "set PATH to your npm's directory".
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
  // Open: with no workspace cwd nothing says which directory is a project's.
  { label: 'the client starts the server in / (no workspace cwd)', cwd: () => '/', home: (h) => h, open: true },
  { label: 'the env block sets HOME to the workspace', cwd: (repo) => repo, home: (h, repo) => repo },
  { label: 'HOME is relative (".")', cwd: (repo) => repo, home: () => '.' },
  { label: 'the client starts the server in a subdirectory of the repository', cwd: (repo) => `${repo}/packages/server`,
    home: (h) => h },
];

for (const c of CASES) {
  test(`adv26: the host npm comes from a repository's bin/ when ${c.label}`, {
    ...(c.open ? { todo: `adv26: ${c.label}: the repository's bin/npm still runs on the host` } : {}),
    timeout: 60_000,
  }, async () => {
    const repo = makeTempDir('adv26-repo');
    mkdirSync(path.join(repo, '.git'));
    mkdirSync(path.join(repo, 'packages', 'server'), { recursive: true });
    const bin = path.join(repo, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\necho "ADV26-HOST-NPM-RAN uid=$(id -u) $*" >&2\nexit 1\n');
    chmodSync(path.join(bin, 'npm'), 0o755);
    const home = makeTempDir('adv26-npm-home');
    const r = await runMcpcell(['run', '--isolate', `npx://e2e-adv26-hostnpm-${id}@1.0.0`], {
      input: '', cwd: c.cwd(repo),
      env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: c.home(home, repo), LANG: 'C.UTF-8',
        XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local/state') },
      guardMs: 30_000,
    });
    assert.doesNotMatch(r.stderr, /ADV26-HOST-NPM-RAN/, `the repository's bin/npm ran on the host, outside any cell:\n${r.stderr}`);
  });
}
