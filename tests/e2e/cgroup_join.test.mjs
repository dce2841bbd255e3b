// cgroup v1: the cell's PID 1 joins its own cgroups by writing "0" to each
// cgroup's `tasks` file, which the supervisor opened for it (src/cell/native/
// cgroup.cc, OpenV1TasksFiles). The fds carry the supervisor's credentials
// (the kernel checks those, not the writer's), so none may reach the server:
// with one it could move any process it can name into the cell's cgroup.
// Here: the server is in the cell's cgroups (seen from the host) and holds
// no cgroup fd, and PID 1's fds are not open to it.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';

// Prints {self: [fd targets], pid1: "readable" | errno code, ppid}.
const probe = `
const fs = require('fs');
const self = fs.readdirSync('/proc/self/fd').map((n) => { try { return fs.readlinkSync('/proc/self/fd/' + n); } catch (e) { return e.code; } });
let pid1;
try { pid1 = fs.readdirSync('/proc/1/fd').map((n) => { try { return fs.readlinkSync('/proc/1/fd/' + n); } catch (e) { return e.code; } }); }
catch (e) { pid1 = e.code; }
let wrote;
try { fs.writeFileSync('/proc/1/fd/3', '0'); wrote = 'yes'; } catch (e) { wrote = e.code; }
console.log(JSON.stringify({ self, pid1, wrote, cgroup: fs.readFileSync('/proc/self/cgroup', 'utf8') }));`;

function v1Mounted(controller) {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .some((l) => / - cgroup cgroup /.test(l) && l.split(' ').at(-1).split(',').includes(controller));
}

test('cgroup v1: the server holds no cgroup fd and cannot reach PID 1\'s', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // No --memory: the default limits take cgroups where the machine lets this user have
  // them (root here) and are skipped with a warning where not; the fds must not leak either way.
  const r = await runInCell([], [NODE_BIN, '-e', probe]);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  const seen = JSON.parse(r.stdout);
  for (const target of seen.self) {
    assert.ok(!/cgroup|tasks/.test(String(target)), `the server holds ${target}`);
  }
  // PID 1 is not dumpable (cell_init.cc): its fds are closed to the server.
  assert.ok(!Array.isArray(seen.pid1) || seen.pid1.every((f) => !/cgroup|tasks/.test(String(f))),
    `PID 1's fds as the server sees them: ${JSON.stringify(seen.pid1)}`);
  assert.notEqual(seen.wrote, 'yes', 'the server wrote through PID 1\'s fd 3');
});

test('cgroup v1, as root: the server runs in the cell\'s memory cgroup (seen from the host)', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (process.getuid() !== 0) return t.skip('cell cgroups on v1 need root here (no delegation)');
  if (!v1Mounted('memory')) return t.skip('no cgroup v1 memory hierarchy on this machine');
  // The server prints its cgroup as the host sees it: /proc/<host pid> is not visible inside,
  // so it sleeps while the test reads the host's /proc for a process with its marker argv.
  const marker = `cgroup-join-${process.pid}-${Date.now()}`;
  const run = runInCell(['--memory', '256m'], [NODE_BIN, '-e', 'setTimeout(() => {}, 3000)', marker]);
  let found = null;
  for (let i = 0; i < 100 && !found; i++) {
    await new Promise((res) => setTimeout(res, 50));
    for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      let cmd;
      try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { continue; }
      if (cmd.includes(marker) && cmd.startsWith(NODE_BIN)) {
        found = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
        break;
      }
    }
  }
  const r = await run;
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  assert.ok(found, 'the server process was not found on the host');
  const memory = found.split('\n').find((l) => /^\d+:memory:/.test(l));
  assert.match(memory ?? '', /:memory:.*\/mcpcell\/mcpcell-\d+-[0-9a-f]{8}$/, `the server's cgroups:\n${found}`);
});
