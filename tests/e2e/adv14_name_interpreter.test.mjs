// Adversary pass adv14 (session 14): an allow rule by name
// (src/policy/condition.cc: the name condition of an interpreted command is
// its script; adv13's fix: it does not hold while a preload runs first).
// The interpreter itself is not judged: any program whose basename is an
// interpreter's (`node`, `python3`, a family name) counts as the
// interpreter, wherever it is, and a bare `node` is whichever PATH finds.
//
// Finding:
//   high   {"all": [{"source": "command"}, {"name": "/srv/*"}]} -> allow
//          runs `/tmp/x/node /srv/server.js` (or `node ...` with
//          PATH=/tmp/x:...) with no cell: /tmp/x/node is any program at all.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';

test('adv14: an allow rule by the script\'s name runs any program called `node`/`python3` (given by path, or the first on a PATH the client sets) with no cell', {
  timeout: 60_000,
}, async () => {
  const root = makeTempDir('adv14-name-interp');
  const srv = path.join(root, 'srv');
  mkdirSync(srv);
  chmodSync(srv, 0o755);
  writeReadableFile(path.join(srv, 'server.js'), 'process.stderr.write("ADV14-TRUSTED-JS\\n");\n');
  writeReadableFile(path.join(srv, 'server.py'), 'import sys\nprint("ADV14-TRUSTED-PY", file=sys.stderr)\n');
  const evil = makeTempDir('adv14-evil-interp');
  for (const name of ['node', 'python3']) {
    writeReadableFile(path.join(evil, name), `#!/bin/sh\necho ADV14-EVIL-INTERPRETER-RAN ${name} >&2\n`);
    chmodSync(path.join(evil, name), 0o755);
  }
  const policy = path.join(root, 'policy.json');
  writeReadableFile(policy, JSON.stringify({ rules: [{ name: 'our-servers', condition: { all: [{ source: 'command' }, { name: `${srv}/*` }] }, action: 'allow' }] }));
  const ran = [];
  const cases = [
    [[path.join(evil, 'node'), path.join(srv, 'server.js')], BASE_PATH],
    [[path.join(evil, 'python3'), path.join(srv, 'server.py')], BASE_PATH],
    [['node', path.join(srv, 'server.js')], `${evil}:${BASE_PATH}`],
  ];
  for (const [cmd, PATH] of cases) {
    const r = await runMcpcell(['run', '--policy', policy, '--', ...cmd], { input: '', cwd: root, env: { PATH, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8' }, guardMs: 30_000 });
    if (/WITHOUT a cell/.test(r.stderr) && /ADV14-EVIL-INTERPRETER-RAN/.test(r.stderr)) ran.push(`PATH=${PATH} ${cmd.join(' ')}`);
  }
  assert.deepEqual(ran, [], 'a program named like an interpreter ran with no cell under a name rule for the script');
});
