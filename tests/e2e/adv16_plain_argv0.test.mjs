// Adversary pass adv16: plain (allow) runs start the real path judged
// (src/cli/launch_plan.cc NameThePlainCommand, policy/trust_facts.cc
// RealPathOf), adv15's fix for a PATH link flipped between check and exec.
//
// Finding:
//   LOW/MED the real path is put in argv[0] too, so a program that reads its
//          mode from argv[0] runs as another program than the one the policy
//          trusted. `rbash` (Debian: /usr/bin/rbash -> bash; mcpcell knows it
//          as an interpreter family, docs/POLICY.md) is bash's restricted
//          mode, chosen by argv[0] alone: a policy trusting
//          `command:///usr/bin/rbash /srv/s.sh` ran s.sh in full bash (cd,
//          redirections, PATH=, exec: the restrictions the rule relied on
//          are gone), with no cell. Same class: rview/rvim (vim's restricted
//          modes), busybox applets (argv[0] busybox takes argv[1] as the
//          program), clang vs clang++, x86_64-linux-gnu-* tool links.
//          Suggested fix: exec the real path judged but keep argv[0] as the
//          caller wrote it (execve(facts.local_path, {ref.package, ...})), or
//          open the judged file once and fexecve it with the original argv[0].
//   held   a link flipped between check and exec (adv15's test), a PATH entry
//          in a directory others may write (IsRootOnlyFile walks to /).

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';

test('adv16: a policy trusting rbash SCRIPT runs SCRIPT in unrestricted bash on a plain run (argv[0] is the real path /usr/bin/bash)', {
  timeout: 30_000,
}, async (t) => {
  const dir = makeTempDir('adv16-rbash');
  const script = path.join(dir, 's.sh');
  writeReadableFile(script, 'if shopt -q restricted_shell; then echo MODE=restricted; else echo MODE=unrestricted; fi\n');
  const policy = path.join(dir, 'policy.json');
  writeReadableFile(policy, JSON.stringify({
    trusted_sources: [`command:///usr/bin/rbash ${script}`],
    rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }],
  }));
  const r = await runMcpcell(['run', '--policy', policy, '--', 'rbash', 's.sh'], {
    input: '', cwd: dir, env: { PATH: BASE_PATH, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8' }, guardMs: 25_000,
  });
  t.diagnostic(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.match(r.stderr, /WITHOUT a cell/, 'the policy did not allow the run (test setup)');
  assert.match(r.stdout, /MODE=/, 'the script did not run');
  assert.match(r.stdout, /MODE=restricted/, 'the trusted restricted shell ran as full bash');
});
