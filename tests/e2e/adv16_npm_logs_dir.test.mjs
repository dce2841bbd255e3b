// Adversary pass adv16: npm's debug log of the host install
// (npx_install.cc Run: --userconfig/--globalconfig/--cache from the
// snapshot, npm_config_* of mcpcell's environment kept for the host npm).
//
// Finding:
//   MEDIUM npm writes a debug log of every run (at silly level whatever
//          --loglevel says) into `logs-dir`, which mcpcell leaves to the
//          config: `npm_config_logs_dir=DIR` in the environment a client
//          config passes makes the host npm write, 0644 (mcpcell's umask
//          022), `http fetch GET .../TOKEN/acme/pkg` and the FetchError's
//          URL into DIR — a directory a cell is granted, read by the
//          attacker's server. The path token mcpcell masks on stderr, turns
//          npm's request log off for, and never puts on a command line is
//          handed to a cell; the attacker never had to know it.
//          Suggested fix: every npm run gets `--logs-dir=<snapshot>/logs`
//          (or `--logs-max=0`): a flag beats the environment and the npmrc.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';

function pathToken() {
  const b62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `Fq8${[...randomBytes(19)].map((b) => b62[b % 62]).join('')}`;
}

test('adv16: npm_config_logs_dir in the environment has the host npm write the registry\'s path token into a directory a cell reads', {
  timeout: 60_000,
}, async (t) => {
  const home = makeTempDir('adv16-logsdir');
  const granted = makeWritableDir('adv16-granted');
  const token = pathToken();
  writeReadableFile(path.join(home, '.npmrc'), `registry=http://127.0.0.1:9/${token}/acme/\n`);
  const r = await runMcpcell(['install', '--install-scripts=skip', 'npx://adv16-logsdir@1.0.0'], {
    input: '',
    env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
      npm_config_fetch_retries: '0', npm_config_update_notifier: 'false', npm_config_logs_dir: granted },
    guardMs: 50_000,
  });
  t.diagnostic(`exit ${r.code}`);
  assert.ok(!r.stderr.includes(token), 'stderr itself held the token (another finding)');
  const leaked = readdirSync(granted).filter((f) => readFileSync(path.join(granted, f), 'utf8').includes(token));
  assert.deepEqual(leaked, [], `npm's debug logs in the granted directory hold the path token: ${leaked.join(', ')}`);
});
