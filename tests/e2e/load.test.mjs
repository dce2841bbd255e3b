// Load (issue 9): many cells at once, many tunnels through one egress proxy,
// a million JSON-RPC messages each way. Tests, not benchmarks: every check
// is "nothing lost, nothing left", never "fast enough"; every wait is bounded
// by a hang guard that fails the test instead of hanging the suite.
// Loopback only: the upstreams are servers of this test on 127.0.0.1.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';

import { egressFlags, writeProfile } from './lib/egress.mjs';
import { added, cgroupDirsNamed, mountinfo, pidsWithArg, pollUntilClean, tmpEntriesNamedMcpcell } from './lib/host.mjs';
import { runArgv, resultText, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN, serverEntry } from './lib/paths.mjs';
import { lineChecker, rpcMessages, streamDigest } from './lib/rpc_stream.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const RPC_PUMP = path.join(E2E_DIR, 'servers', 'rpc_pump.mjs');
const TUNNEL_SWARM = path.join(E2E_DIR, 'servers', 'tunnel_swarm.mjs');

/** Entries of /dev/shm (a cell's /dev/shm is its own tmpfs: the host's must not change). */
const devShm = () => readdirSync('/dev/shm');

/**
 * What a cell may leave on the host, taken before a test; the returned
 * `leftovers()` names what was added since: processes with `marker` in their
 * argv, cgroups of the supervisors in `supervisors` (pids, filled in as they
 * start; mcpcell names its cgroups mcpcell-<supervisor pid>-*), host mounts,
 * /tmp/mcpcell* and /dev/shm entries. (Other sessions' cells on the same
 * machine can add /tmp and /dev/shm entries too: recheck a failure alone.)
 */
function hostSnapshot(marker, supervisors) {
  const mounts = mountinfo();
  const tmp = tmpEntriesNamedMcpcell();
  const shm = devShm();
  return () => {
    const problems = [];
    const procs = pidsWithArg(marker);
    if (procs.length) problems.push(`processes still running: ${procs.join(' ')}`);
    const cg = supervisors.flatMap((pid) => cgroupDirsNamed(`mcpcell-${pid}-`));
    if (cg.length) problems.push(`cgroup dirs left: ${cg.join(' ')}`);
    const m = added(mounts, mountinfo());
    if (m.length) problems.push(`host mounts added: ${m.join(' | ')}`);
    const t = added(tmp, tmpEntriesNamedMcpcell());
    if (t.length) problems.push(`/tmp entries added: ${t.join(' ')}`);
    const s = added(shm, devShm());
    if (s.length) problems.push(`/dev/shm entries added: ${s.join(' ')}`);
    return problems.length ? problems.join('; ') : null;
  };
}

// --- 50 cells at once --------------------------------------------------------

/**
 * How many cells the run starts at once. 50 as root. The unprivileged user's
 * RLIMIT_NPROC is per real uid across the whole machine (setrlimit(2)): every
 * thread of every process of that uid counts, and a cell's processes keep the
 * caller's uid on the host; 50 node servers with ~11 threads each plus 50
 * supervisors (2 threads) and their SDK clients need ~700, well inside this
 * machine's limit, so the unprivileged run starts 50 too unless the limit is
 * lower than the worst case (then it says so and starts fewer).
 */
function cellCount() {
  const want = 50;
  if (process.getuid() === 0) return { n: want };
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const m = /^Max processes\s+(\d+|unlimited)/m.exec(limits);
  const nproc = !m || m[1] === 'unlimited' ? Infinity : Number(m[1]);
  const perCell = 16; // node server threads + supervisor threads, with margin
  const fit = Math.floor((nproc - 200) / perCell); // 200: the test runner and the rest of the user's session
  return fit >= want ? { n: want } : { n: Math.max(1, fit), why: `RLIMIT_NPROC ${nproc} fits ${fit} cells of ~${perCell} threads` };
}

test('50 native cells at once, each an SDK client on server-everything: all succeed, nothing left', { timeout: 600_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { n, why } = cellCount();
  if (why) t.diagnostic(`starting ${n} cells, not 50: ${why}`);
  const marker = `e2e-load-${randomBytes(6).toString('hex')}`;
  const supervisors = [];
  const leftovers = hostSnapshot(marker, supervisors);
  const one = async (i) => {
    // The marker rides in the server's argv: server-everything reads only its
    // first argument (the transport, "stdio").
    // --grace 60s: after the client closes stdin, a server gets the default
    // 2 s to exit on its own before SIGTERM (exit 143); 50 node processes on
    // two cores can need longer. A bound, not a measurement.
    const s = startServer(t, ['--grace', '60s'], [NODE_BIN, serverEntry('server-everything'), 'stdio', `${marker}-${i}`]);
    try {
      // 50 node servers starting at once on a small machine: initialize may
      // take longer than the SDK's default 60 s. A hang guard, not a measurement.
      await s.client.connect(s.transport, { timeout: 300_000 });
      supervisors.push(s.transport.pid);
      const { tools } = await s.client.listTools(undefined, { timeout: 300_000 });
      assert.ok(tools.some((x) => x.name === 'echo'), `cell ${i}: tools/list lacks echo`);
      const r = await s.client.callTool({ name: 'echo', arguments: { message: `cell ${i}` } }, undefined, { timeout: 300_000 });
      assert.match(resultText(r), new RegExp(`cell ${i}\\b`));
      await s.client.close();
      const exit = await s.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, `cell ${i} exit`);
      return null;
    } catch (e) {
      return `cell ${i}: ${e.message}; stderr: ${s.stderr().slice(-500)}`;
    }
  };
  const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  const failed = outcomes.filter(Boolean);
  assert.deepEqual(failed, [], `${failed.length} of ${n} cells failed:\n${failed.join('\n')}`);
  const left = await pollUntilClean(leftovers, 30_000);
  assert.equal(left, null, left);
});

// --- a million messages each way ---------------------------------------------

const MESSAGES = 1_000_000;

/**
 * Spawns argv (stdout fed, chunk by chunk, to `onStdout`; stdin fed from the
 * iterable `feed`, else held open until the process exits: EOF would tell
 * mcpcell the client left). Resolves to {code, signal, stderr} once it exits;
 * a hang guard (not a measurement) kills it if it never does.
 */
function runStreaming(argv, { onStdout, feed, onSpawn, guardMs = 400_000 }) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', onStdout);
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.slice(0, 8).join(' ')} ... still running after ${guardMs} ms; stderr:\n${stderr}`));
    }, guardMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stderr });
    });
    child.stdin.on('error', () => {});
    if (feed) Readable.from(feed).pipe(child.stdin);
    else child.on('exit', () => child.stdin.destroy());
    if (onSpawn) child.once('spawn', () => onSpawn(child));
  });
}

/** `mcpcell run --isolate --read <e2e> -- node rpc_pump.mjs <pumpArgs>` (see runStreaming). */
function runPump(pumpArgs, onStdout, { feed } = {}) {
  // --grace 60s: the echo pump ends after stdin's EOF, once it has written
  // the rest and its summary; on a busy machine that can take longer than
  // the default 2 s before mcpcell would SIGTERM it.
  const argv = [MCPCELL_BIN, ...runArgv(['--relay=off', '--read', E2E_DIR, '--grace', '60s'], [NODE_BIN, RPC_PUMP, ...pumpArgs])];
  return runStreaming(argv, { onStdout, feed });
}

test('1 M JSON-RPC messages client → server through a cell: none lost, none reordered, byte-identical', { timeout: 420_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const seed = `c2s-${randomBytes(4).toString('hex')}`;
  const check = lineChecker(MESSAGES, seed);
  const r = await runPump(['echo'], (d) => check.feed(d), { feed: rpcMessages(MESSAGES, seed) });
  assert.equal(r.code, 0, `mcpcell exit ${r.code} ${r.signal}; stderr:\n${r.stderr}`);
  const got = check.finish();
  // What the server received, by its own count and hash (the summary line)...
  assert.equal(got.extraLines.length, 1, `expected one summary line after the echo, got: ${got.extraLines.slice(0, 3).join(' | ')}`);
  const summary = JSON.parse(got.extraLines[0]).params;
  assert.deepEqual(summary, streamDigest(MESSAGES, seed), 'the server received other bytes than the client sent');
  // ...and what came back, message by message, in order.
  assert.equal(got.firstMismatch, null, `first difference: ${JSON.stringify(got.firstMismatch)}`);
  assert.equal(got.received, MESSAGES);
});

test('1 M JSON-RPC messages server → client through a cell: none lost, none reordered, byte-identical', { timeout: 420_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const seed = `s2c-${randomBytes(4).toString('hex')}`;
  const check = lineChecker(MESSAGES, seed);
  const r = await runPump(['emit', String(MESSAGES), seed], (d) => check.feed(d));
  assert.equal(r.code, 0, `mcpcell exit ${r.code} ${r.signal}; stderr:\n${r.stderr}`);
  const got = check.finish();
  assert.equal(got.firstMismatch, null, `first difference: ${JSON.stringify(got.firstMismatch)}`);
  assert.deepEqual(got.extraLines, [], 'lines after the last message');
  assert.equal(got.received, MESSAGES);
  assert.equal(got.sha256, streamDigest(MESSAGES, seed).sha256);
});

// --- 1,000 tunnels through one proxy -----------------------------------------

const TUNNELS = 1000;
const TUNNEL_PAYLOAD = 16 * 1024;

/** A TCP echo server on 127.0.0.1 that counts how many connections it holds at once. */
async function startEchoServer() {
  const stats = { open: 0, maxOpen: 0, total: 0 };
  const server = net.createServer({ allowHalfOpen: true }, (sock) => {
    stats.total += 1;
    stats.open += 1;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    sock.on('close', () => (stats.open -= 1));
    sock.on('error', () => {});
    sock.pipe(sock);
  });
  // A backlog above the tunnel count: the proxy connects all of them at once.
  await new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  return { port: server.address().port, stats, close: () => new Promise((r) => server.close(r)) };
}

/** VmRSS of `pid` in KiB (0 once it is gone). */
function rssKiB(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const SWARM_MODES = {
  connect: 'HTTP CONNECT tunnels (a proxy-aware client)',
  direct: 'redirected connections to the DNS stub\'s stand-in address (a client that ignores proxies)',
};

for (const [mode, what] of Object.entries(SWARM_MODES)) {
  test(`1,000 concurrent ${what} through one cell's egress proxy: every payload echoed byte-identical, proxy memory bounded`, { timeout: 180_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    // The supervisor holds two sockets per tunnel and lifts its soft limit to
    // the hard one; below ~2 per tunnel the machine, not mcpcell, is too small.
    const hard = /^Max open files\s+\S+\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (hard !== undefined && hard !== 'unlimited' && Number(hard) < 2 * TUNNELS + 256) {
      t.skip(`the hard RLIMIT_NOFILE here is ${hard}: ${TUNNELS} tunnels need about ${2 * TUNNELS + 256} descriptors in the supervisor`);
      return;
    }
    const echo = await startEchoServer();
    t.after(() => echo.close());
    const name = 'echo.load.test';
    const dir = makeTempDir('tunnels');
    const profile = writeProfile(dir, { allow_host: [name], allow_port: [echo.port], insecure_allow_all: false });
    const cellArgs = [...egressFlags({ profile, resolve: [`${name}:${echo.port}:127.0.0.1`] }), '--read', E2E_DIR];
    const command = [NODE_BIN, TUNNEL_SWARM, String(TUNNELS), `${name}:${echo.port}`, String(TUNNEL_PAYLOAD), mode];

    // mcpcell starts with the soft descriptor limit most sessions get (1024;
    // node raises its own to the hard limit, and its children would inherit
    // that): the limit a client that does not raise it hands to mcpcell.
    const argv = ['/bin/sh', '-c', 'ulimit -Sn 1024 && exec "$@"', 'sh', MCPCELL_BIN, ...runArgv(['--relay=off', ...cellArgs], command)];
    // The supervisor (the mcpcell process itself, exec'd by sh) runs the proxy
    // on a thread: its RSS is the proxy's.
    const rss = { first: 0, max: 0 };
    let sampler;
    let stdout = '';
    const r = await runStreaming(argv, {
      guardMs: 120_000,
      onStdout: (d) => (stdout += d),
      onSpawn: (child) => {
        sampler = setInterval(() => {
          const kib = rssKiB(child.pid);
          rss.first ||= kib;
          rss.max = Math.max(rss.max, kib);
        }, 100);
      },
    });
    clearInterval(sampler);
    const report = stdout.trim() ? JSON.parse(stdout.trim().split('\n').pop()) : null;
    assert.ok(report, `tunnel_swarm printed no report; mcpcell exit ${r.code} ${r.signal}; stderr:\n${r.stderr.slice(-3000)}`);
    assert.deepEqual(report.failures, [], `first failures: ${report.failures.join('\n')}\nmcpcell stderr:\n${r.stderr.slice(-3000)}`);
    assert.equal(report.established, TUNNELS, 'tunnels established');
    assert.equal(report.echoed, TUNNELS, 'tunnels whose payload came back byte-identical');
    assert.equal(r.code, 0, `mcpcell exit ${r.code}; stderr:\n${r.stderr.slice(-3000)}`);
    // They were open at the same time: the swarm holds every tunnel until all are up.
    assert.equal(echo.stats.total, TUNNELS);
    assert.equal(echo.stats.maxOpen, TUNNELS, 'the upstream saw every tunnel open at once');
    t.diagnostic(`supervisor RSS: ${rss.first} KiB at start, ${rss.max} KiB at most`);
    // The bound: the proxy must not keep payloads per tunnel. A tunnel holds
    // two sockets, two coroutine frames and, only while a send is partial, a
    // copy of the unsent part; socket buffers are the kernel's, not RSS.
    // Measured: a supervisor is ~10 MiB before any tunnel and grows by 5-8 KiB
    // per open tunnel. Allowed: 24 MiB + 16 KiB per tunnel (~40 MiB here), about
    // twice the peak seen; a proxy that kept one copy of each direction's
    // payload per tunnel (32 KiB each) would need ~48 MiB and fail.
    const boundKiB = 24 * 1024 + TUNNELS * 16;
    assert.ok(rss.max > 0, 'the supervisor\'s RSS was never sampled');
    assert.ok(rss.max < boundKiB, `supervisor RSS peaked at ${rss.max} KiB (bound ${boundKiB} KiB)`);
  });
}
