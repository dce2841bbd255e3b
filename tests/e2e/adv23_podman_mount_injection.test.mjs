// Adversary pass adv23: a comma in a granted path injects mount options into
// Podman's bind: the engine mounts a host path mcpcell never checked.
//
// Finding (HIGH for root callers of podman cells whose grants name a
// directory someone else named: per-job or per-upload directories, a
// checkout, what an earlier cell wrote under a --write grant): mcpcell sends
// each bind as HostConfig.Mounts {Type bind, Source, Target, ReadOnly}
// (src/cell/docker/create_body.cc:30-37 BindMount; SpecMounts, lines 116-140,
// checks the source and passes it on verbatim). Podman's Docker-compatible
// API (4.3 here) turns each entry into a `--mount type=bind,source=S,
// destination=T,...` string and parses it again, splitting on ','; a
// repeated `src=` is not refused and the last one wins. A grant of the
// (real, harmless, checked) directory "/srv/jobs/in,src=/home/alice/proj"
// is mounted as host /home/alice/proj at /srv/jobs/in: no credential
// refusal, no credential mask (its .env, .aws/, ... are shown), no
// hidden-dir mask, no swap check — every guarantee of a grant is made on a
// path the engine does not mount. `ro`/`U`/`chown` cannot be repeated
// (podman refuses), so the mount stays read-only and owned as it is; a ':'
// or ',' in a masked path's tmpfs target fails the create instead (fails
// closed). Docker takes Mounts as structured JSON (not affected; tried).
//   Reproduce (root): mkdir -p '/srv/x/in,src=/etc'; mcpcell run
//   --isolate=podman --read '/srv/x/in,src=/etc' -- ls /srv/x/in
//   lists the host's /etc.
//   Suggested fix: refuse, for podman cells, a bind source or target (and a
//   tmpfs target) containing ',' or ':' (exit 122, naming the path and why:
//   Podman's compat API re-parses them as mount options), or move to
//   libpod's own API (/libpod/containers/create, structured mounts); add a
//   unit test on the refusal.
//
// Bounded: one short podman run (90 s guard); the tree is removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { PODMAN_SOCKET, needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

test('podman cell: a comma in a granted path cannot swap in another source (a project whose .env is masked)', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t, PODMAN_SOCKET))) return;
  const root = mkdtempSync('/var/tmp/e2e-adv23-inject-');
  dirs.push(root);
  chmodSync(root, 0o755);
  // The project: its .env is masked in any grant of it.
  const proj = path.join(root, 'proj');
  mkdirSync(proj, { mode: 0o755 });
  writeFileSync(path.join(proj, '.env'), 'API_KEY=adv23-env-secret\n', { mode: 0o644 });
  // The granted directory: a real, empty one whose name carries "src=<proj>".
  const granted = `${root}/in,src=${proj}`;
  mkdirSync(granted, { recursive: true });
  spawnSync('chmod', ['-R', 'a+rX', `${root}/in,src=`]);
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate=podman', '--relay=off', '--read', granted, '--', '/bin/sh', '-c',
    `cat '${root}/in/.env' '${granted}/.env' 2>/dev/null; echo done`], { encoding: 'utf8', input: '', timeout: 90_000 });
  assert.doesNotMatch(r.stdout, /adv23-env-secret/,
    `the podman cell read ${proj}/.env (masked in any grant of it) through a grant of "${granted}"; stderr: ${r.stderr}`);
  assert.ok(r.status !== 0 || /done/.test(r.stdout), `neither refused nor run (exit ${r.status}); stderr: ${r.stderr}`);
});
