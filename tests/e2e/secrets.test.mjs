// The relay's secret scan (issue 13) with the real SDK client and a real SDK
// server that leaks a GitHub token on request (servers/leaky_server.mjs):
// by default every leak is masked in place (text, a token split across two
// text blocks, structuredContent, resource text, isError text, a JSON-RPC
// error) and a token in tool arguments reaches the server masked; with the
// profile's mcpcell.secret_scan mode "block" the leak becomes an isError
// result and the argument a refused call that never reaches the server.
// Nothing the client receives, nothing the server receives and nothing in the
// audit log contains the token; the log names the rule and its SHA-256.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { E2E_DIR, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const LEAKY = path.join(E2E_DIR, 'servers', 'leaky_server.mjs');
const TOKEN = newGithubToken();
const SHA = createHash('sha256').update(TOKEN).digest('hex');
const PLACES = ['text', 'split', 'structured', 'resource', 'iserror'];

async function start(t, profile, audit) {
  const secretDir = makeTempDir('secrets-token');
  const tokenFile = path.join(secretDir, 'token');
  writeReadableFile(tokenFile, TOKEN);
  const args = ['--relay=on', '--read', E2E_DIR, '--read', secretDir, '--audit-log', audit];
  if (profile) args.push('--permission-profile', profile);
  const s = startServer(t, args, [NODE_BIN, LEAKY, tokenFile]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  return s;
}

function records(file) {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function assertClean(what, value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  assert.ok(!text.includes(TOKEN) && !text.includes(TOKEN.slice(10)), `${what} contains the token: ${text}`);
}

test('secrets: the default redacts every leak in place and masks arguments', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const audit = path.join(makeWritableDir('secrets-log'), 'audit.jsonl');
  const s = await start(t, null, audit);
  const { client } = s;
  for (const where of PLACES) {
    const r = await client.callTool({ name: 'leak', arguments: { where } });
    assertClean(`the ${where} result`, r);
    assert.match(JSON.stringify(r), /\[REDACTED:github-pat-classic\]/, `${where}: ${JSON.stringify(r)}`);
  }
  await assert.rejects(client.callTool({ name: 'leak', arguments: { where: 'rpcerror' } }), (e) => {
    assertClean('the JSON-RPC error', e.message);
    assert.match(e.message, /auth failed for \[REDACTED:github-pat-classic\]/);
    return true;
  });
  const echo = await client.callTool({ name: 'echo', arguments: { value: `use ${TOKEN} please` } });
  assert.equal(echo.content[0].text, 'got: use [REDACTED:github-pat-classic] please');
  await client.close();
  await s.exited;
  assertClean('the server\'s stderr', s.stderr());
  assert.match(s.stderr(), /echo received: use \[REDACTED:github-pat-classic\] please/);
  const raw = readFileSync(audit, 'utf8');
  assertClean('the audit log', raw);
  const found = records(audit).filter((e) => e.event === 'secret');
  assert.equal(found.length, PLACES.length + 2, JSON.stringify(found));
  for (const e of found) {
    assert.equal(e.action, 'redacted');
    assert.deepEqual(e.findings, [{ rule: 'github-pat-classic', sha256: SHA, bytes: 40 }]);
  }
  assert.deepEqual(found.map((e) => e.from).sort(), [...Array(PLACES.length + 1).fill('server'), 'client'].sort());
});

test('secrets: mode block turns a leak into an isError result and refuses a call carrying one', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const conf = makeTempDir('secrets-conf');
  const profile = path.join(conf, 'block.json');
  writeReadableFile(profile, JSON.stringify({ mcpcell: { secret_scan: { mode: 'block' } } }));
  const audit = path.join(makeWritableDir('secrets-log'), 'audit.jsonl');
  const s = await start(t, profile, audit);
  const { client } = s;
  for (const where of PLACES) {
    const r = await client.callTool({ name: 'leak', arguments: { where } });
    assertClean(`the blocked ${where} result`, r);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.content[0].text, /carries a secret \(github-pat-classic\) and was blocked/);
    assert.match(r.content[0].text, /mcpcell\.secret_scan\.to_client is block/);
  }
  await assert.rejects(client.callTool({ name: 'echo', arguments: { value: TOKEN } }), (e) => {
    assertClean('the refusal', e.message);
    assert.match(e.message, /tools\/call request carries a secret \(github-pat-classic\)/);
    assert.ok(e.message.includes(profile), e.message);
    return true;
  });
  // The session goes on: a clean call still passes.
  const ok = await client.callTool({ name: 'echo', arguments: { value: 'hello' } });
  assert.equal(ok.content[0].text, 'got: hello');
  await client.close();
  await s.exited;
  assert.ok(!s.stderr().includes('echo received: ghp_'), 'the blocked call reached the server');
  assertClean('the server\'s stderr', s.stderr());
  assertClean('the audit log', readFileSync(audit, 'utf8'));
  const found = records(audit).filter((e) => e.event === 'secret');
  assert.equal(found.length, PLACES.length + 1);
  for (const e of found) {
    assert.equal(e.action, 'blocked');
    assert.equal(e.findings[0].sha256, SHA);
  }
});
