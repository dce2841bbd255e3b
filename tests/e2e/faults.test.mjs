// Things going wrong: the server crashes, is killed, cannot be found or run,
// the flags are bad, or mcpcell itself is SIGKILLed mid-run (nothing of the
// cell may survive it).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, lines, runInCell, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { added, cgroupDirsNamed, mountinfo, pidsWithArg, pollUntilClean, tmpEntriesNamedMcpcell } from './lib/host.mjs';
import { NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

test('a server that exits 3 before answering: the client sees the close, mcpcell exits 3', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const s = startServer(t, [], [NODE_BIN, '-e', 'process.exit(3)']);
  await assert.rejects(s.connect(), /Connection closed/i);
  assert.equal(s.transportClosed(), true);
  assert.deepEqual(await s.exited, { code: 3, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
});

test('a server killed by SIGKILL inside the cell: mcpcell exits 128+9', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell([], [NODE_BIN, '-e', "process.kill(process.pid, 'SIGKILL')"]);
  assert.equal(r.code, 137, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, '');
});

test('a command that does not exist in the cell: 127 and one clear stderr line', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell([], ['/nonexistent/cmd']);
  assert.equal(r.code, EXIT.notFound, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, '');
  // Warnings about unenforceable *default* limits (unprivileged, no delegated
  // cgroup) may precede it; the error itself is one line.
  const errLines = lines(r.stderr).filter((l) => !/^mcpcell: warning:/.test(l));
  assert.equal(errLines.length, 1, `expected one error line, got:\n${r.stderr}`);
  assert.match(errLines[0], /\/nonexistent\/cmd/);
});

test('a command that is not executable: 126', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('noexec');
  const file = path.join(dir, 'not-a-program.txt');
  writeReadableFile(file, 'just text\n'); // mode 0644: no x bit
  const r = await runInCell(['--read', dir], [file]);
  assert.equal(r.code, EXIT.cannotExec, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /not-a-program\.txt/);
});

test('a bad flag value is a usage error (2) and runs nothing', { timeout: 60_000 }, async () => {
  const r = await runMcpcell(['run', '--isolate', '--memory', 'lots', '--', '/bin/true']);
  assert.equal(r.code, EXIT.usage, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /memory/i);
});

test('kill -9 of mcpcell mid-run leaves no process, cgroup, mount or /tmp dir behind', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const marker = `e2e-marker-${randomBytes(6).toString('hex')}`;
  // If mcpcell fails this test, do not leave its cell running into later tests.
  t.after(async () => {
    for (const pid of pidsWithArg(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await pollUntilClean(() => (pidsWithArg(marker).length ? 'still exiting' : null), 5_000);
    for (const dir of cgroupDirsNamed(`mcpcell-${mcpcellPid}-`)) {
      try {
        rmdirSync(dir);
      } catch {}
    }
  });
  const mountsBefore = mountinfo();
  const tmpBefore = tmpEntriesNamedMcpcell();
  let mcpcellPid = null;
  let killed; // resolves to null once the server was seen and mcpcell was SIGKILLed

  const result = await runInCell([], [NODE_BIN, '-e', 'setInterval(() => {}, 1000)', marker], {
    onSpawn: (child) => {
      mcpcellPid = child.pid;
      // Wait (bounded) until the server itself runs, then kill mcpcell hard.
      killed = pollUntilClean(() => {
        if (child.exitCode !== null) return 'mcpcell exited by itself';
        const others = pidsWithArg(marker).filter((p) => p !== child.pid);
        return others.length > 0 ? null : 'server process not started';
      }).then((complaint) => {
        child.kill('SIGKILL');
        return complaint;
      });
    },
  });
  assert.equal(await killed, null, `mcpcell exit ${result.code}; stderr:\n${result.stderr}`);
  assert.equal(result.signal, 'SIGKILL');

  const leftover = await pollUntilClean(() => {
    const problems = [];
    const procs = pidsWithArg(marker);
    if (procs.length) problems.push(`processes still running: ${procs.join(' ')}`);
    const cgroups = cgroupDirsNamed(`mcpcell-${mcpcellPid}-`);
    if (cgroups.length) problems.push(`cgroup dirs left: ${cgroups.join(' ')}`);
    const mounts = added(mountsBefore, mountinfo());
    if (mounts.length) problems.push(`host mounts added: ${mounts.join(' | ')}`);
    const tmps = added(tmpBefore, tmpEntriesNamedMcpcell());
    if (tmps.length) problems.push(`temp entries left: ${tmps.join(' ')}`);
    return problems.length ? problems.join('; ') : null;
  });
  assert.equal(leftover, null, leftover);
  assert.equal(result.pipesHeldOpen, false, "something of the cell kept mcpcell's stdout/stderr open");
});
