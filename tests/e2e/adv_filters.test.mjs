// Adversary pass on the relay's prompt/resource rules (mcpcell.prompts,
// mcpcell.resources; docs/PROFILES.md). The server is the real SDK's
// McpServer, which reads a resource by `new URL(uri).toString()`: WHATWG
// URL parsing trims leading/trailing spaces, drops `localhost` from file
// URLs, adds the `//` a special scheme lacks, lowercases and IDNA-maps a
// special scheme's host and drops its default port. A URI the deny globs do
// not match in the spelling the client sent must not be served in the
// spelling the server reads.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { E2E_DIR, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const SERVER = path.join(E2E_DIR, 'servers', 'adv_resource_server.mjs');

function profileWith(rules) {
  const dir = makeTempDir('adv-filters');
  const file = path.join(dir, 'p.json');
  writeReadableFile(file, JSON.stringify({ mcpcell: rules }));
  return file;
}

// Each spelling reads, through new URL(), a resource a deny rule names.
const SPELLINGS = [
  ' test://secrets/key',                 // leading space: trimmed by the URL parser
  '  test://secrets/key',
  'file://localhost/srv/secret.txt',     // localhost is the empty host of a file URL
  'file://LOCALHOST/srv/secret.txt',
  'file:/srv/secret.txt',                // a special scheme without "//"
  'file:srv/secret.txt',
  'http:internal.example/admin',
  'http:/internal.example/admin',
  'http://internal.example:80/admin',    // the default port is dropped
  'http://internal.example:080/admin',
  'http://ｉｎｔｅｒｎａｌ.example/admin',  // fullwidth letters: IDNA maps them
  ' test://notes/private1',              // a template's match, leading space
  'test://secrets:/key',                 // an empty port, any scheme
  'test://@secrets/key',                 // an empty userinfo
];

test('adv resources: no spelling of a denied URI is read through the SDK server', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = profileWith({
    resources: { deny: ['test://secrets/*', 'file:///srv/*', 'http://internal.example/*', 'test://notes/private*'] },
  });
  const s = startServer(t, ['--permission-profile', profile], [NODE_BIN, SERVER]);
  await s.connect();
  const { client } = s;
  // The control: the plain spellings are refused, an allowed one is read.
  for (const uri of ['test://secrets/key', 'file:///srv/secret.txt', 'http://internal.example/admin', 'test://notes/private1']) {
    await assert.rejects(client.readResource({ uri }), /mcpcell\.resources\.deny/, uri);
  }
  const ok = await client.readResource({ uri: 'test://docs/readme' });
  assert.equal(ok.contents[0].text, 'public readme');
  const leaked = [];
  for (const uri of SPELLINGS) {
    try {
      const r = await client.readResource({ uri });
      leaked.push(`${JSON.stringify(uri)} -> ${JSON.stringify(r.contents.map((c) => c.text))}`);
    } catch (e) {
      // Refused by mcpcell (-32001) is the expected outcome; a server error
      // (not found, invalid URL) is no leak either.
      if (!/mcpcell|not found|Invalid URL/.test(e.message)) leaked.push(`${JSON.stringify(uri)} -> ${e.message}`);
    }
  }
  await client.close();
  assert.deepEqual(leaked, [], `denied resources were read:\n${leaked.join('\n')}\nmcpcell stderr:\n${s.stderr()}`);
});

// A deny rule naming one file exactly: a query or fragment is not part of
// the path a file server opens (fileURLToPath drops both).
test('adv resources: a query or fragment does not take a file past an exact deny rule', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const data = makeTempDir('adv-filters-data');
  writeReadableFile(path.join(data, 'secret.txt'), 'SECRET-DATA-FILE');
  writeReadableFile(path.join(data, 'open.txt'), 'open data');
  const secret = `file://${data}/secret.txt`;
  const profile = profileWith({ resources: { deny: [secret] } });
  const s = startServer(t, ['--permission-profile', profile, '--read', data, '--env', `ADV_DATA_DIR=${data}`],
    [NODE_BIN, SERVER]);
  await s.connect();
  const { client } = s;
  await assert.rejects(client.readResource({ uri: secret }), /mcpcell\.resources\.deny/);
  assert.equal((await client.readResource({ uri: `file://${data}/open.txt` })).contents[0].text, 'open data');
  const leaked = [];
  for (const uri of [`${secret}?`, `${secret}?x=1`, `${secret}#`, `${secret}#top`]) {
    try {
      const r = await client.readResource({ uri });
      leaked.push(`${JSON.stringify(uri)} -> ${JSON.stringify(r.contents.map((c) => c.text))}`);
    } catch (e) {
      if (!/mcpcell/.test(e.message)) leaked.push(`${JSON.stringify(uri)} -> ${e.message}`);
    }
  }
  await client.close();
  assert.deepEqual(leaked, [], `denied file read:\n${leaked.join('\n')}\nmcpcell stderr:\n${s.stderr()}`);
});
