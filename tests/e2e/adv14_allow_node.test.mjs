// Adversary pass adv14 (session 14): the `node` of an allow run of npx://
// (src/cli/launch_plan.cc NameThePlainNode). adv13: a relative PATH entry
// (node_modules/.bin, "") chose it; the fix searches PATH's absolute entries
// only. PATH is what the client's env block says, so an absolute entry is
// as easy to write: the repository's /abs/repo/node_modules/.bin, ~/bin.
//
// Finding:
//   medium PATH=/abs/dir:... with DIR/node (direnv's PATH_add writes a repo's
//          node_modules/.bin absolute): the trusted npx:// package is run, with
//          no cell, by that `node`; and on every npx:// run, isolated too, the
//          host npm's `#!/usr/bin/env node` finds it (HostToolEnvironment keeps
//          any absolute entry that is not a --write dir), so it runs on the
//          host before any cell.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { RUN_ID, accountEnv, fakePublicNpxEntry, removeCacheEntries } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { BASE_PATH, policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);
after(removeCacheEntries);

const ROOT = makeTempDir('adv14-node');
const ID = RUN_ID;
const env = (extra = {}) => accountEnv({ npm_config_update_notifier: 'false', ...extra });
const { trusting } = policyRunner({ root: ROOT });

test('adv14: an absolute PATH entry (a repo\'s /abs/node_modules/.bin) chooses the `node` that runs a trusted npx:// package with no cell, and the host npm\'s node on an isolated run', {
  timeout: 60_000,
}, async () => {
  const name = `adv14-absnode-${ID}`;
  fakePublicNpxEntry(name, 'console.error("ADV14-TRUSTED-PACKAGE");\n');
  const repo = makeTempDir('adv14-repo');
  const bin = path.join(repo, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  writeReadableFile(path.join(bin, 'node'), '#!/bin/sh\necho ADV14-ABS-PATH-NODE-RAN "$@" >&2\nexec /usr/bin/node "$@"\n');
  chmodSync(path.join(bin, 'node'), 0o755);
  const policy = trusting(`npx://${name}@1.0.0`);
  const ran = [];
  const cache = makeTempDir('adv14-node-cache');
  const cases = [
    ['allow', ['--policy', policy, `npx://${name}@1.0.0`], {}],
    // An isolated run of a package not yet cached: the host npm installs it (the registry here answers nothing).
    ['isolate', ['--isolate', `npx://adv14-uncached-${ID}@1.0.0`], { XDG_CACHE_HOME: cache, npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' }],
  ];
  for (const [how, args, extra] of cases) {
    const r = await runMcpcell(['run', '--install-scripts=skip', ...args],
      { input: '', cwd: repo, env: env({ PATH: `${bin}:${BASE_PATH}`, ...extra }), guardMs: 30_000 });
    // Outside any cell either way: as the server (allow) or as the host npm's `#!/usr/bin/env node`.
    if (/ADV14-ABS-PATH-NODE-RAN/.test(r.stderr)) ran.push(`${how}:\n${r.stderr}`);
  }
  assert.deepEqual(ran, [], 'PATH\'s node ran on the host');
  // Control: with the system's node first, the same allow run does run the
  // trusted package with no cell — the refusal above is the node's.
  const control = await runMcpcell(['run', '--install-scripts=skip', '--policy', policy, `npx://${name}@1.0.0`],
    { input: '', cwd: repo, env: env({ PATH: BASE_PATH }), guardMs: 30_000 });
  assert.match(control.stderr, /ADV14-TRUSTED-PACKAGE/, `control: the trusted package did not run:\n${control.stderr}`);
});
