// Adversary pass adv23: Podman's (and skopeo/buildah's) registry login and
// git's XDG credential store are not credential locations: a `--read ~`
// cell of any backend reads them.
//
// Finding (MEDIUM: a registry password or a git token, base64 or plain, to
// any server granted the home): src/cell/credentials.cc:33-81 masks
// ~/.docker (Docker's config.json) but not ~/.config/containers/auth.json,
// the persistent auth file podman, skopeo and buildah read
// ({"auths":{"registry":{"auth":"base64(user:password)"}}}; `login` writes
// $XDG_RUNTIME_DIR/containers/auth.json, lost at reboot, so the lasting
// copy goes here, and `--authfile`/REGISTRY_AUTH_FILE setups point here),
// nor ~/.config/git/credentials, git's credential store when
// $XDG_CONFIG_HOME/git/credentials exists ("https://user:token@host", the
// same thing as the masked ~/.git-credentials). Both are read through a
// plain `--read ~` in native, docker and podman cells alike (tried).
//   Reproduce: mkdir -p ~/.config/containers; podman login quay.io (or write
//   auth.json); mcpcell run --read ~ -- cat ~/.config/containers/auth.json
//   Suggested fix: add {".config/containers/auth.json", "container registry
//   credentials (podman, skopeo, buildah)"} and {".config/git/credentials",
//   "git credentials"} to the list, with unit tests.
//
// Bounded: one short run per backend (90 s guard each); the tree is removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const FILES = {
  '.config/containers/auth.json': '{"auths":{"registry.example":{"auth":"YWR2MjM6cmVnaXN0cnktcGFzcw=="}}}\n',
  '.config/git/credentials': 'https://adv23:git-token-adv23@git.example\n',
};

test('docker cell granted a home: container registry and git XDG credentials are masked', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  const home = mkdtempSync('/var/tmp/e2e-adv23-creds-');
  dirs.push(home);
  spawnSync('chmod', ['755', home]);
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    writeFileSync(path.join(home, rel), text, { mode: 0o644 });
  }
  spawnSync('chmod', ['-R', 'a+rX', home]);
  const cat = Object.keys(FILES).map((rel) => `cat ${path.join(home, rel)} 2>/dev/null`).join('; ');
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate=docker', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    `${cat}; echo done`], { encoding: 'utf8', input: '', timeout: 90_000 });
  assert.match(r.stdout, /done/, `the docker cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
  assert.doesNotMatch(r.stdout, /YWR2MjM6cmVnaXN0cnktcGFzcw==/, 'the cell read ~/.config/containers/auth.json');
  assert.doesNotMatch(r.stdout, /git-token-adv23/, 'the cell read ~/.config/git/credentials');
});
