// Adversary pass adv23: in a podman cell every directory mask is a copy of
// what it masks.
//
// Finding (HIGH: directory masks, a guarantee of every cell, hide nothing
// in podman cells; what the cell's uid may read below a masked credential
// directory is shown): a masked directory is an empty
// read-only tmpfs (src/cell/spec_builder.cc:145-158, hidden_dirs.cc:92),
// sent to the engine in HostConfig.Tmpfs with the options of TmpfsOptions
// (src/cell/docker/create_body.cc:67-86: "ro,nosuid,nodev,size=4096,
// mode=0755"). Podman's tmpfs mounts default to `tmpcopyup`: it copies the
// directory underneath into the new tmpfs (owners and modes kept) before
// mounting it. So a podman cell granted `--read ~` reads whatever in ~/.ssh,
// ~/.aws, ~/.kube, ~/.config/gh, ... its uid may read (a hand-made ~/.aws
// 0755 with credentials 0644, umask 022, is common). The copied tmpfs root
// keeps the source's mode but is root's, so a 0700 directory (mcpcell's own
// state directory) stays closed to the cell's uid (tried with --uid of the
// owner: Permission denied); a cell as uid 0 would read those copies too,
// but as root every grant with --uid 0 is refused as swappable. Docker's
// Tmpfs does not copy (docker cells are masked; tried), nor does runsc.
//   Reproduce (root, podman service up): mkdir -p /srv/x/.aws;
//   echo key >/srv/x/.aws/credentials;
//   mcpcell run --isolate=podman --read /srv/x -- cat /srv/x/.aws/credentials
//   prints key (a docker cell: No such file or directory).
//   Suggested fix: add `notmpcopyup` to every tmpfs option string sent to
//   Podman (TmpfsOptions when the engine is Podman; `podman run --tmpfs
//   /x:ro,size=4k,notmpcopyup` shows an empty directory here, without it the
//   files), and a unit test on the body.
//
// Bounded: one short podman run (90 s guard); the tree is removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { PODMAN_SOCKET, needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

/**
 * A fresh root-owned directory in /var/tmp (a directory of the cell's uid in
 * sticky /var/tmp is refused as swappable) holding `files` ({rel: [text,
 * mode]}), owned by `uid` and readable by all.
 */
function tree(uid, files) {
  const root = mkdtempSync('/var/tmp/e2e-adv23-copyup-');
  dirs.push(root);
  for (const [rel, [text, mode]] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text, { mode });
  }
  spawnSync('chmod', ['-R', 'go+rX', root]);
  for (const top of new Set(Object.keys(files).map((rel) => rel.split('/')[0]))) {
    spawnSync('chown', ['-R', `${uid}:${uid}`, path.join(root, top)]);
  }
  return root;
}

/** Runs `cat FILES` in a podman cell granted `root`: its stdout (fails if the cell did not run). */
function catInPodman(root, files) {
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate=podman', '--read', root, '--', '/bin/sh', '-c',
    `cat ${files.join(' ')} 2>/dev/null; echo done`], { encoding: 'utf8', input: '', timeout: 90_000 });
  assert.match(r.stdout, /done/, `the podman cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
  return r.stdout;
}

test('podman cell: a masked credential directory shows nothing', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t, PODMAN_SOCKET))) return;
  const root = tree(0, { '.aws/credentials': ['aws-key-adv23', 0o644] });
  const out = catInPodman(root, [`${root}/.aws/credentials`]);
  assert.doesNotMatch(out, /aws-key-adv23/, 'the podman cell read .aws/credentials through its mask');
});
