// Issue 14 item 4: a client's `env` block (API keys) reaches mcpcell's
// environment, and the clean-environment rule drops it. mcpcell now says so
// on stderr, once per run, naming the variables that look like credentials
// and the flags that pass them (--env NAME, --secret NAME=FILE --secret-env
// NAME) or silence the note (--drop-env NAME). Names only: a value never
// appears in mcpcell's output. src/cell/env_notice.h.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EXIT, runArgv, runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, serverEntry } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const VALUES = { GITHUB_TOKEN: 'ghp_e2eValueNeverPrinted1', OPENAI_API_KEY: 'sk-e2eValueNeverPrinted2',
  DB_PASSWORD: 'e2eValueNeverPrinted3' };
const ENV = { ...process.env, ...VALUES, HARMLESS_SETTING: 'plain' };
const showToken = ['/bin/sh', '-c', 'echo "token=${GITHUB_TOKEN:-unset}"'];
const NOTE = /note: the server does not get ([A-Z_, ]+) from mcpcell's environment/g;

/** Every variable list the notes on `stderr` name. */
function notedNames(stderr) {
  return [...stderr.matchAll(NOTE)].map((m) => m[1].split(', '));
}

function assertNoValue(text) {
  for (const v of Object.values(VALUES)) assert.ok(!text.includes(v), `a value was printed:\n${text}`);
}

test('dropped credentials are named once, with the flags that pass them; never their values', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell([], showToken, { env: ENV, input: '' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'token=unset\n', 'the clean environment still drops the variable');
  assert.deepEqual(notedNames(r.stderr), [['DB_PASSWORD', 'GITHUB_TOKEN', 'OPENAI_API_KEY']], r.stderr);
  assert.match(r.stderr, /--env DB_PASSWORD .*--secret DB_PASSWORD=FILE --secret-env DB_PASSWORD.*--drop-env DB_PASSWORD/);
  assert.doesNotMatch(r.stderr, /HARMLESS_SETTING/);
  assertNoValue(r.stderr + r.stdout.replace('token=unset', ''));
});

test('a passed variable (--env, --secret-env) and a --drop-env one are not named; all of them: no note', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secretDir = makeTempDir('env-notice-secret');
  writeReadableFile(`${secretDir}/pw`, 'from-a-file\n');
  const passed = await runInCell(['--env', 'GITHUB_TOKEN', '--drop-env', 'OPENAI_API_KEY'], showToken, { env: ENV, input: '' });
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(passed.stdout, `token=${VALUES.GITHUB_TOKEN}\n`);
  assert.deepEqual(notedNames(passed.stderr), [['DB_PASSWORD']], passed.stderr);
  const none = await runInCell(['--env', 'GITHUB_TOKEN', '--drop-env', 'OPENAI_API_KEY',
    '--secret', `DB_PASSWORD=${secretDir}/pw`, '--secret-env', 'DB_PASSWORD'], showToken, { env: ENV, input: '' });
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(notedNames(none.stderr), [], none.stderr);
});

test('--drop-env NAME next to --env NAME is refused naming both', { timeout: 30_000 }, async () => {
  const r = await runInCell(['--env', 'GITHUB_TOKEN', '--drop-env', 'GITHUB_TOKEN'], showToken, { env: ENV, input: '' });
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.match(r.stderr, /--drop-env GITHUB_TOKEN: is also passed with --env GITHUB_TOKEN; keep one/, r.stderr);
  assert.equal(r.stdout, '');
});

test('a denied run says nothing about the environment (nothing starts)', { timeout: 30_000 }, async () => {
  const dir = makeTempDir('env-notice-deny');
  const policy = `${dir}/deny.json`;
  writeReadableFile(policy, JSON.stringify({ rules: [{ condition: { source: 'command' }, action: 'deny' }] }));
  const r = await runInCell(['--policy', policy], showToken, { env: ENV, input: '' });
  assert.equal(r.code, EXIT.denied, r.stderr);
  assert.deepEqual(notedNames(r.stderr), [], r.stderr);
});

// What the issue saw: the SDK's stdio client starts mcpcell with the server
// entry's `env` block; the server starts, and the user learns why the key
// it asks for is missing.
test('a real MCP client\'s env block: the server connects, and stderr names the dropped key', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN,
    args: runArgv([], [NODE_BIN, serverEntry('server-everything')]),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', OPENAI_API_KEY: VALUES.OPENAI_API_KEY },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'env-notice', version: '0' });
  t.after(() => client.close());
  await client.connect(transport);
  const tools = await client.listTools();
  assert.ok(tools.tools.length > 0);
  assert.deepEqual(notedNames(stderr), [['OPENAI_API_KEY']], stderr);
  assertNoValue(stderr);
});
