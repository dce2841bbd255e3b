// Adversary pass adv15 (session 15): the `node` a plain (allow) run of an
// npx:// package starts (src/cli/launch_plan.cc NameThePlainNode,
// src/util/path_search.cc IsSystemProgram).
//
// Finding:
//   medium IsSystemProgram judges std::filesystem::canonical(node) (a
//          root-owned file under /usr, in a root-owned directory), but
//          NameThePlainNode puts the path PATH found — the symlink — into
//          argv[0], and RunPlainly execve()s that path later (after the spec,
//          the mount plan and CheckRecordsOutOfReach's scans). A client env
//          block's PATH=<dir a cell may write>:/usr/bin with <dir>/node a
//          symlink that the attacker's cell keeps flipping between
//          /usr/bin/node and its own script wins the race in a few runs: the
//          attacker's program runs as the user with NO cell on an allow run of
//          a trusted, public npx:// entry.
//          Fix: put the canonical path (the file judged) in argv[0], and open
//          it once (O_PATH|O_NOFOLLOW on the canonical path, fstat, then
//          execveat/fexecve the same fd); better, refuse a PATH entry that is
//          not itself a system directory.
//
// Held (same file, normal test): a plain symlink to a non-system program, and
// a directory of PATH that is a system dir but a node owned by another user.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv15-swap');
const ID = `${process.pid}${Date.now() % 100000}`;
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function trusting(source) {
  const p = path.join(ROOT, `policy-${source.replace(/\W/g, '_')}.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

/**
 * A cache entry as a clean public install leaves it (record, lockfile,
 * package): made by hand here because this machine's registry has no such
 * package; the test is about the node, not about the entry.
 */
function publicEntry(name) {
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const pkg = path.join(entry, 'node_modules', name);
  mkdirSync(pkg, { recursive: true, mode: 0o755 });
  writeReadableFile(path.join(entry, '.mcpcell-origin.json'), JSON.stringify({ public: true, settings: "the public registry's, checked at install" }) + '\n');
  writeReadableFile(path.join(entry, 'package-lock.json'), JSON.stringify({ name: 'x', lockfileVersion: 3, requires: true,
    packages: { '': { dependencies: { [name]: '1.0.0' } }, [`node_modules/${name}`]: { version: '1.0.0', resolved: `https://registry.npmjs.org/${name}/-/${name}-1.0.0.tgz`, integrity: 'sha512-x', bin: { srv: 'index.js' } } } }));
  writeReadableFile(path.join(pkg, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: { srv: 'index.js' } }));
  writeReadableFile(path.join(pkg, 'index.js'), '#!/usr/bin/env node\nconsole.error("ADV15-REAL-NODE " + process.execPath);\n');
  chmodSync(path.join(pkg, 'index.js'), 0o755);
  for (const d of [path.join(entry, 'node_modules'), entry]) chmodSync(d, 0o755);
  return entry;
}

test('adv15: the plain run\'s node is judged by its canonical path but exec\'d by the symlink PATH found: a cell flipping that symlink runs its own program with NO cell', {
  timeout: 240_000,
}, async (t) => {
  const name = `adv15-nodeswap-${ID}`;
  publicEntry(name);
  const dir = makeWritableDir('adv15-pathdir');  // a directory a cell may write (an isolated server's --write)
  const evil = path.join(dir, 'evil');
  writeFileSync(evil, '#!/bin/sh\necho ADV15-SWAPPED-NODE-RAN "$@" >&2\n');
  chmodSync(evil, 0o755);
  const link = path.join(dir, 'node');
  symlinkSync('/usr/bin/node', link);
  const flipper = spawn(process.execPath, [path.join(HERE, 'lib', 'adv15_symlink_flipper.mjs'), link, '/usr/bin/node', evil], { stdio: 'ignore' });
  t.after(() => flipper.kill('SIGKILL'));
  const env = { PATH: `${dir}:/usr/local/bin:/usr/bin:/bin`, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false' };
  const outcomes = {};
  let won = '';
  for (let i = 0; i < 30 && !won; i++) {
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
      { input: '', env, guardMs: 30_000 });
    const k = /ADV15-SWAPPED-NODE-RAN/.test(r.stderr) ? 'swapped' : /ADV15-REAL-NODE/.test(r.stderr) ? 'real' : /not a system program/.test(r.stderr) ? 'refused' : `other(${r.code})`;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
    if (k === 'swapped') won = r.stderr;
  }
  t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  assert.equal(won, '', `the attacker's program ran as node with no cell:\n${won}`);
});

test('adv15 (held): a PATH symlink to a program that is not the system\'s is refused as the plain run\'s node', { timeout: 60_000 }, async () => {
  const name = `adv15-nodelink-${ID}`;
  publicEntry(name);
  const dir = makeWritableDir('adv15-pathdir2');
  const evil = path.join(dir, 'evil');
  writeFileSync(evil, '#!/bin/sh\necho ADV15-LINKED-NODE-RAN >&2\n');
  chmodSync(evil, 0o755);
  symlinkSync(evil, path.join(dir, 'node'));
  const env = { PATH: `${dir}:/usr/local/bin:/usr/bin:/bin`, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false' };
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env, guardMs: 30_000 });
  assert.doesNotMatch(r.stderr, /ADV15-LINKED-NODE-RAN/);
  assert.match(r.stderr, /not a system program/);
});

test('adv15: an allow rule by the script\'s name: the interpreter is judged by one PATH lookup (TrustFacts.local_path) and exec\'d after a second one (RunPlainly → FindOnHostPath): a `node` that appears in between runs with NO cell', {
  timeout: 240_000,
}, async (t) => {
  const root = makeTempDir('adv15-name-race');
  const srv = path.join(root, 'srv');
  mkdirSync(srv);
  chmodSync(srv, 0o755);
  writeReadableFile(path.join(srv, 'server.js'), 'process.stderr.write("ADV15-TRUSTED-JS\\n");\n');
  const policy = path.join(root, 'policy.json');
  writeReadableFile(policy, JSON.stringify({ rules: [{ name: 'our-servers', condition: { all: [{ source: 'command' }, { name: `${srv}/*` }] }, action: 'allow' }] }));
  const dir = makeWritableDir('adv15-pathdir3');
  const evil = path.join(dir, 'evil');
  writeFileSync(evil, '#!/bin/sh\necho ADV15-SECOND-LOOKUP-RAN >&2\n');
  chmodSync(evil, 0o755);
  // The cell's flipper: `node` in the PATH dir is by turns a link to the
  // system's node and the attacker's script (no node there at all works too:
  // the first lookup then finds /usr/bin/node).
  const link = path.join(dir, 'node');
  symlinkSync('/usr/bin/node', link);
  const flipper = spawn(process.execPath, [path.join(HERE, 'lib', 'adv15_symlink_flipper.mjs'), link, '/usr/bin/node', evil], { stdio: 'ignore' });
  t.after(() => flipper.kill('SIGKILL'));
  const outcomes = {};
  let won = '';
  for (let i = 0; i < 30 && !won; i++) {
    const r = await runMcpcell(['run', '--policy', policy, '--', 'node', path.join(srv, 'server.js')],
      { input: '', cwd: root, env: { PATH: `${dir}:/usr/local/bin:/usr/bin:/bin`, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8' }, guardMs: 30_000 });
    const k = /ADV15-SECOND-LOOKUP-RAN/.test(r.stderr) ? 'swapped' : /ADV15-TRUSTED-JS/.test(r.stderr) ? (/WITHOUT a cell/.test(r.stderr) ? 'real-plain' : 'real-cell') : `other(${r.code})`;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
    if (k === 'swapped' && /WITHOUT a cell/.test(r.stderr)) won = r.stderr;
  }
  t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  assert.equal(won, '', `the attacker's program ran as the interpreter with no cell:\n${won}`);
});
