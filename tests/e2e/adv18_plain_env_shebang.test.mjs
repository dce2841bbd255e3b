// Adversary pass adv18: plain (allow) runs of a trusted command
// (cli/launch_plan.cc NameThePlainCommand: the judged real path exec'd,
// argv as written; util/root_only_file.cc: the file and every directory
// above it root's).
//
// Held: a trusted root-owned `#!/usr/bin/env INTERP` script (every npm
// global MCP server has `#!/usr/bin/env node`) has env(1) search the plain
// run's PATH for INTERP at exec, after the judgement. The caller's PATH
// (a client env block's "${workspaceFolder}/node_modules/.bin:...") does
// not reach the plain run (its PATH is the cell's system PATH), and
// `--env PATH=...` is refused on a plain run. Both tests pass; they fail
// if either is lost. (Suggested hardening all the same: judge the "#!"
// interpreter of a plain run's script like NameThePlainNode judges node.)

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const TOOL = `/usr/local/bin/adv18-envtool-${process.pid}`;
after(() => rmSync(TOOL, { force: true }));

function setup() {
  const interp = `adv18interp${process.pid}`;
  writeFileSync(TOOL, `#!/usr/bin/env ${interp}\n`, { mode: 0o755 });
  chmodSync(TOOL, 0o755);
  const repo = makeTempDir('adv18-envrepo');
  const bin = path.join(repo, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  const marker = path.join(repo, 'ran');
  writeFileSync(path.join(bin, interp), `#!/bin/sh\necho "the repository's ${interp} ran: $*" > ${marker}\n`, { mode: 0o755 });
  chmodSync(path.join(bin, interp), 0o755);
  const policy = path.join(repo, 'policy.json');
  writeReadableFile(policy, JSON.stringify({
    trusted_sources: [`command://${TOOL}`],
    rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }],
  }));
  return { repo, bin, marker, policy };
}

test('adv18 held: a trusted root-owned `#!/usr/bin/env INTERP` command does not run the INTERP of the caller\'s PATH (a repository\'s)', {
  timeout: 30_000,
}, async (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to put a root-owned program in /usr/local/bin'); return; }
  const { repo, bin, marker, policy } = setup();
  const r = await runMcpcell(['run', '--policy', policy, '--', path.basename(TOOL)], {
    input: '', cwd: repo, env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8' },
    guardMs: 25_000,
  });
  t.diagnostic(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.match(r.stderr, /WITHOUT a cell/, 'the policy did not allow the run (test setup)');
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  assert.equal(ran, '', `an interpreter from the caller's PATH ran with no cell: ${ran}`);
});

test('adv18 held: --env PATH=REPO/node_modules/.bin is refused on a plain run of a trusted `#!/usr/bin/env` command', {
  timeout: 30_000,
}, async (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to put a root-owned program in /usr/local/bin'); return; }
  const { repo, bin, marker, policy } = setup();
  const r = await runMcpcell(['run', '--policy', policy, '--env', `PATH=${bin}:/usr/local/bin:/usr/bin:/bin`, '--', path.basename(TOOL)], {
    input: '', cwd: repo, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8' },
    guardMs: 25_000,
  });
  t.diagnostic(`exit ${r.code}\nstderr: ${r.stderr}`);
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  assert.equal(ran, '', `an interpreter from --env PATH ran with no cell: ${ran}`);
  assert.notEqual(r.code, 0);
});
