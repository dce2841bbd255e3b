// The prompt and resource rules (mcpcell.prompts, mcpcell.resources) with the
// real server-everything and the real SDK client in a native cell: denied
// prompts, resources and URI templates are hidden from their lists; prompts/get,
// resources/read, resources/subscribe (percent-encoded or not) and
// completion/complete of them are refused with an error naming the rule and
// how to allow it; every denial is a record in the audit log. A hostile
// server's resource updates for a denied URI never reach the client.
// scripts/test.sh runs e2e files as root and as mcpcell-test.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { runArgv, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const DOC = 'demo://resource/static/document/';
const DYN = 'demo://resource/dynamic/';

function writeProfile(label, mcpcell) {
  const file = path.join(makeTempDir(label), 'content.json');
  writeReadableFile(file, JSON.stringify({ mcpcell }, null, 2));
  return file;
}

const records = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Asserts the SDK's rejection is mcpcell's policy refusal naming `rule`, the profile, and the fix. */
function refusedBy(rule, profile, fix = /remove that entry to allow it/) {
  return (e) => {
    assert.equal(e.code, -32001, e.message);
    assert.ok(e.message.includes(rule), `${e.message} does not name ${rule}`);
    assert.ok(e.message.includes(profile), `${e.message} does not name ${profile}`);
    assert.match(e.message, fix);
    return true;
  };
}

async function startEverything(t, profile, audit) {
  const s = startServer(t, ['--permission-profile', profile, '--audit-log', audit],
    [NODE_BIN, serverEntry('server-everything')]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  return s;
}

test('prompt and resource deny rules: hidden from every list, refused naming the rule, on the record', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = writeProfile('content-deny', {
    prompts: { deny: ['args-prompt', 'completable-*'] },
    resources: { deny: [`${DOC}architecture.md`, `${DYN}blob/*`] },
  });
  const audit = path.join(makeWritableDir('content-log'), 'calls.jsonl');
  const s = await startEverything(t, profile, audit);
  const { client } = s;

  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  assert.ok(prompts.includes('simple-prompt') && prompts.includes('resource-prompt'), prompts.join(','));
  assert.ok(!prompts.includes('args-prompt') && !prompts.includes('completable-prompt'), prompts.join(','));
  await assert.rejects(client.getPrompt({ name: 'args-prompt', arguments: { city: 'x' } }),
    refusedBy('mcpcell.prompts.deny[0] ("args-prompt")', profile));
  const simple = await client.getPrompt({ name: 'simple-prompt' });
  assert.ok(simple.messages.length > 0, JSON.stringify(simple));

  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes(`${DOC}features.md`), uris.join(','));
  assert.ok(!uris.includes(`${DOC}architecture.md`), uris.join(','));
  await assert.rejects(client.readResource({ uri: `${DOC}architecture.md` }),
    refusedBy(`mcpcell.resources.deny[0] ("${DOC}architecture.md")`, profile));
  const features = await client.readResource({ uri: `${DOC}features.md` });
  assert.ok(features.contents[0].text.length > 0);

  // Templates: the blob template is covered by the deny glob, so hidden; its
  // expansions are refused where they are read, the text template's pass.
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
  assert.deepEqual(templates, [`${DYN}text/{resourceId}`]);
  await assert.rejects(client.readResource({ uri: `${DYN}blob/1` }), refusedBy('mcpcell.resources.deny[1]', profile));
  const text = await client.readResource({ uri: `${DYN}text/1` });
  assert.match(text.contents[0].text, /Resource 1/);

  // Subscriptions: a denied URI, plainly or percent-encoded, never reaches the server.
  await assert.rejects(client.subscribeResource({ uri: `${DYN}blob/1` }), refusedBy('mcpcell.resources.deny[1]', profile));
  await assert.rejects(client.subscribeResource({ uri: `${DYN}%62lob/1` }),
    refusedBy('percent-encoding', profile, /send the plain URI/));
  await assert.rejects(client.unsubscribeResource({ uri: `${DYN}blob/1` }), refusedBy('mcpcell.resources.deny[1]', profile));
  assert.deepEqual(await client.subscribeResource({ uri: `${DYN}text/1` }), {});
  assert.deepEqual(await client.unsubscribeResource({ uri: `${DYN}text/1` }), {});

  // Completions of a denied prompt's arguments tell what it takes: refused.
  await assert.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' },
    argument: { name: 'department', value: 'E' } }), refusedBy('mcpcell.prompts.deny[1] ("completable-*")', profile));
  await assert.rejects(client.complete({ ref: { type: 'ref/resource', uri: `${DYN}blob/{resourceId}` },
    argument: { name: 'resourceId', value: '1' } }), refusedBy('mcpcell.resources.deny[1]', profile));
  const allowed = await client.complete({ ref: { type: 'ref/resource', uri: `${DYN}text/{resourceId}` },
    argument: { name: 'resourceId', value: '1' } });
  assert.ok(Array.isArray(allowed.completion.values), JSON.stringify(allowed));

  // A prompt that embeds any resource on request: a denied one is withheld
  // from its answer (the server's content, but resources/read refuses it).
  const blob = await client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Blob', resourceId: '1' } });
  const embedded = blob.messages.map((m) => m.content);
  assert.ok(!embedded.some((c) => c.type === 'resource'), JSON.stringify(embedded));
  assert.ok(embedded.some((c) => c.type === 'text' && c.text.includes('withheld an embedded resource') &&
    c.text.includes('mcpcell.resources.deny[1]')), JSON.stringify(embedded));
  const textPrompt = await client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Text', resourceId: '1' } });
  assert.ok(textPrompt.messages.some((m) => m.content.type === 'resource' && m.content.resource.uri === `${DYN}text/1`),
    JSON.stringify(textPrompt));

  await client.close();
  assert.equal((await s.exited).code, 0, s.stderr());
  const withheld = records(audit).filter((e) => e.event === 'resource_withheld');
  assert.deepEqual(withheld.map((e) => [e.method, e.uris]), [['prompts/get', [`${DYN}blob/1`]]], JSON.stringify(withheld));

  const denied = records(audit).filter((e) => e.outcome === 'denied');
  assert.deepEqual(denied.map((e) => [e.event, e.prompt ?? e.uri ?? e.ref]), [
    ['prompt_get', 'args-prompt'],
    ['resource_read', `${DOC}architecture.md`],
    ['resource_read', `${DYN}blob/1`],
    ['resource_subscribe', `${DYN}blob/1`],
    ['resource_subscribe', `${DYN}%62lob/1`],
    ['resource_unsubscribe', `${DYN}blob/1`],
    ['completion', 'completable-prompt'],
    ['completion', `${DYN}blob/{resourceId}`],
  ], JSON.stringify(denied));
  for (const e of denied) assert.ok(e.reason.includes(profile), JSON.stringify(e));
  const end = records(audit).find((e) => e.event === 'session_end');
  assert.equal(end.denied, denied.length, JSON.stringify(end));
});

test('prompt and resource allow lists: only what they name is listed and served', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = writeProfile('content-allow', {
    prompts: { allow: ['simple-prompt'] },
    resources: { allow: [`${DOC}*`] },
  });
  const audit = path.join(makeWritableDir('content-allow-log'), 'calls.jsonl');
  const s = await startEverything(t, profile, audit);
  const { client } = s;
  assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['simple-prompt']);
  await assert.rejects(client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Text', resourceId: '1' } }),
    refusedBy('mcpcell.prompts.allow', profile, /add it there to allow it/));
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.length > 0 && uris.every((u) => u.startsWith(DOC)), uris.join(','));
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, [], 'no template is covered by the allow list');
  await assert.rejects(client.readResource({ uri: `${DYN}text/1` }),
    refusedBy('mcpcell.resources.allow', profile, /add it there to allow it/));
  await assert.rejects(client.subscribeResource({ uri: `${DYN}text/1` }),
    refusedBy('mcpcell.resources.allow', profile, /add it there to allow it/));
  await client.close();
  assert.equal((await s.exited).code, 0, s.stderr());
  const denied = records(audit).filter((e) => e.outcome === 'denied').map((e) => e.event);
  assert.deepEqual(denied, ['prompt_get', 'resource_read', 'resource_subscribe']);
});

test('a server\'s updates of a denied resource never reach the client; updates of others do', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = writeProfile('content-updates', { resources: { deny: ['demo://private/*'] } });
  const audit = path.join(makeWritableDir('content-updates-log'), 'calls.jsonl');
  const update = (uri) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  // Unasked, in every spelling the server's client might read as the denied URI.
  const lines = [update('demo://private/a'), update('DEMO://PRIVATE/a'), update('demo://%70rivate/a'),
    update('demo://public/../private/a'), '{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo:\\/\\/priv\\u0061te\\/a"}}',
    update('demo://public/a')];
  const script = `process.stdout.write(${JSON.stringify(lines.join('\n') + '\n')}); process.stdin.resume();`;
  const r = await runMcpcell([...runArgv(['--permission-profile', profile, '--audit-log', audit], [NODE_BIN, '-e', script])],
    { input: '' });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\n').filter(Boolean), [update('demo://public/a')], r.stdout);
  const dropped = records(audit).filter((e) => e.event === 'relay_refused' && e.from === 'server');
  assert.equal(dropped.length, 5, JSON.stringify(dropped));
  for (const e of dropped) assert.ok(e.reason.includes(profile), e.reason);
});

test('without rules, templates, subscriptions and updates pass as they came', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const audit = path.join(makeWritableDir('content-none-log'), 'calls.jsonl');
  const s = startServer(t, ['--audit-log', audit], [NODE_BIN, serverEntry('server-everything')]);
  await s.connect();
  const { client } = s;
  const updated = new Promise((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
  assert.equal((await client.listResourceTemplates()).resourceTemplates.length, 2);
  assert.deepEqual(await client.subscribeResource({ uri: `${DYN}blob/1` }), {});
  // server-everything sends simulated updates of subscribed resources once asked to.
  await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
  assert.equal(await updated, `${DYN}blob/1`);
  await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });  // off: its timer would outlive stdin
  await client.close();
  assert.equal((await s.exited).code, 0, s.stderr());
  assert.equal(records(audit).filter((e) => e.outcome === 'denied').length, 0);
});

test('the relay is on by default at every isolation level; --relay=off turns it off (dry run)', { timeout: 30_000 }, async () => {
  for (const level of ['native', 'docker', 'podman', 'gvisor', 'container']) {
    const on = await runMcpcell(['run', `--isolate=${level}`, '--dry-run', '--', '/bin/true']);
    assert.equal(on.code, 0, `${level}: ${on.stderr}`);
    const cell = JSON.parse(on.stdout).cell;
    assert.equal(cell.relay.on, true, `${level}: ${JSON.stringify(cell.relay)}`);
    assert.equal(cell.relay.pins.on, true, `${level}: pins hold wherever the relay runs`);
    const off = await runMcpcell(['run', `--isolate=${level}`, '--relay=off', '--dry-run', '--', '/bin/true']);
    assert.equal(off.code, 0, `${level}: ${off.stderr}`);
    assert.equal(JSON.parse(off.stdout).cell.relay.on, false, level);
  }
});
