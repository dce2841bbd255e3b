// Running the real mcpcell binary: as a plain process (runMcpcell) and as the
// stdio server of the real MCP SDK client (startServer).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPCELL_BIN, nodeCellArgs } from './paths.mjs';

/** mcpcell's own exit codes (src/core/exit_codes.h). */
export const EXIT = Object.freeze({
  usage: 2,
  isolationUnavailable: 122,
  denied: 123,
  timeout: 124,
  setupFailed: 125,
  cannotExec: 126,
  notFound: 127,
});

/** Safety net so a hung run fails the test instead of hanging the suite; not a measurement. */
const HANG_GUARD_MS = 60_000;
/** How long stdout/stderr may stay open after mcpcell exited before we stop reading them. */
const PIPE_DRAIN_MS = 3_000;

export function assertBinaryExists() {
  if (!existsSync(MCPCELL_BIN)) {
    throw new Error(`mcpcell binary not found at ${MCPCELL_BIN}: build it (cmake --build build) or set MCPCELL_BIN`);
  }
}

/** `mcpcell run --isolate <cellArgs> -- <command>` as an argv (without the binary). */
export function runArgv(cellArgs, command) {
  return ['run', '--isolate', ...nodeCellArgs(), ...cellArgs, '--', ...command];
}

/**
 * Runs mcpcell with `args`, feeds `input` (if any, then EOF) on stdin and
 * collects everything. Resolves to {code, signal, stdout, stderr, pid, pipesHeldOpen}.
 * `onSpawn(child)` lets a test act on the running process (e.g. kill it).
 */
export function runMcpcell(args, { input, env, cwd, onSpawn, guardMs = HANG_GUARD_MS } = {}) {
  assertBinaryExists();
  return new Promise((resolve, reject) => {
    const child = spawn(MCPCELL_BIN, args, {
      env: env ?? process.env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcpcell ${args.join(' ')} still running after ${guardMs} ms; stderr:\n${stderr}`));
    }, guardMs);
    child.on('error', (e) => {
      clearTimeout(guard);
      reject(e);
    });
    // 'close' waits for stdout/stderr to reach EOF. If something mcpcell left
    // behind still holds them (a bug the kill -9 test looks for), give up on
    // them shortly after mcpcell itself exited so the test can report it.
    let exitTimer = null;
    const finish = (code, signal, pipesHeldOpen) => {
      clearTimeout(guard);
      clearTimeout(exitTimer);
      resolve({ code, signal, stdout, stderr, pid: child.pid, pipesHeldOpen });
    };
    child.on('exit', (code, signal) => {
      child.stdin.destroy();
      exitTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal, true);
      }, PIPE_DRAIN_MS);
    });
    child.on('close', (code, signal) => finish(code, signal, false));
    child.stdin.on('error', () => {}); // the cell may exit before reading stdin
    // Without `input`, stdin stays open for the whole run, like an MCP client's:
    // mcpcell treats EOF on stdin as the client leaving (it closes the server's
    // stdin, then SIGTERMs it after the grace period).
    if (input !== undefined) child.stdin.end(input);
    if (onSpawn) child.once('spawn', () => onSpawn(child));
  });
}

/**
 * Runs `mcpcell run --isolate <cellArgs> -- <command>` (see runMcpcell). The
 * programs these tests run are probes, many of which print JSON objects that
 * are not JSON-RPC (their findings, process.env): the relay, on by default,
 * refuses every line that could be a message and is not one. So they get the
 * raw copy (--relay=off) unless the test asks for `relay: 'on'` or
 * `relay: 'default'` (mcpcell's own default: plain text passes unjudged).
 */
export function runInCell(cellArgs, command, options = {}) {
  const mode = options.relay ?? 'off';
  const relay = mode === 'default' ? [] : [`--relay=${mode}`];
  return runMcpcell(runArgv([...relay, ...cellArgs], command), options);
}

/**
 * Starts `mcpcell run --isolate <cellArgs> -- <command>` as the stdio server of
 * an SDK Client. Does not connect: call `await s.connect()` (it may reject when
 * a test expects the server to die). `t` is the test: when it ends, a mcpcell
 * still running is SIGKILLed, so a failed assertion cannot leave the test file
 * hanging on an open child. Returns
 *   { client, transport, connect(), stderr(), exited, killsSent }
 * where `exited` resolves to {code, signal} of mcpcell itself and `killsSent`
 * lists the signals the SDK had to send to mcpcell (empty = it exited on its own
 * after stdin closed).
 */
export function startServer(t, cellArgs, command, { capabilities = {}, env, clientInfo } = {}) {
  assertBinaryExists();
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN,
    args: runArgv(cellArgs, command),
    env: env ?? {},
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderrText += d));

  const killsSent = [];
  let child = null;
  t.after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  // The SDK keeps the child process private and forgets it on close(); the
  // exit status of mcpcell is what these tests are about, so take the handle
  // the moment it exists (start() assigns it synchronously before resolving).
  const originalStart = transport.start.bind(transport);
  transport.start = () => {
    const started = originalStart();
    child = transport._process;
    if (!child || typeof child.on !== 'function') {
      throw new Error('SDK StdioClientTransport no longer exposes _process: update lib/mcpcell.mjs');
    }
    child.on('exit', (code, signal) => resolveExit({ code, signal }));
    const kill = child.kill.bind(child);
    child.kill = (sig = 'SIGTERM') => {
      killsSent.push(sig);
      return kill(sig);
    };
    return started;
  };

  const client = new Client(clientInfo ?? { name: 'mcpcell-e2e', version: '0.0.0' }, { capabilities });
  let closed = false;
  transport.onclose = () => (closed = true); // Protocol.connect chains this handler before its own
  return {
    client,
    transport,
    exited,
    killsSent,
    connect: () => client.connect(transport),
    stderr: () => stderrText,
    transportClosed: () => closed,
  };
}

/** `mcpcell doctor --json`, parsed; null (with the reason) when it fails. */
export async function doctor() {
  const r = await runMcpcell(['doctor', '--json']);
  try {
    return { json: JSON.parse(r.stdout), raw: r };
  } catch (e) {
    return { json: null, raw: r, reason: `doctor --json did not print JSON (exit ${r.code}): ${e.message}` };
  }
}

/**
 * Whether a native cell can be built here at all. When mcpcell answers 122
 * (isolation unavailable), tests skip with its message — unless the harness
 * says isolation is required (E2E_REQUIRE_ISOLATION=1, set by scripts/test.sh
 * where the kernel is known to allow it), in which case that is a failure.
 */
let probe;
export async function isolationSkipReason() {
  probe ??= runInCell([], ['/bin/true']);
  const r = await probe;
  if (r.code !== EXIT.isolationUnavailable) return null;
  const reason = `native isolation unavailable: ${r.stderr.trim()}`;
  if (process.env.E2E_REQUIRE_ISOLATION === '1') throw new Error(`${reason} (E2E_REQUIRE_ISOLATION=1)`);
  return reason;
}

/** First line of stderr that looks like mcpcell's own (for messages in assertions). */
export function lines(text) {
  return text.split('\n').filter((l) => l.length > 0);
}

/** In a test: skips it (with the printed reason) when no native cell can be built here. */
export async function skipWithoutCell(t) {
  const reason = await isolationSkipReason();
  if (reason) t.skip(reason);
  return reason !== null;
}

/** The text of a tool result's first content item. */
export function resultText(result) {
  return (result.content ?? []).map((c) => c.text ?? '').join('\n');
}
