// Adversary pass on the relay and Python's universal newlines (the Python MCP
// SDK reads stdin through TextIOWrapper: a lone CR ends a line). A line that
// is ONE valid message to the relay (CR is JSON white space) may carry a
// complete second message between two CRs: `{…read_file…,"x":\r{…write_file…}\r}`.
// The relay judged the allowed outer call; Python reads three lines, the
// second the denied call. The reader here is real CPython in the cell,
// echoing each line it gets as a notification.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

test('adv relay: a denied call between two CRs inside an allowed one never reaches a Python reader', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const conf = makeTempDir('adv-line-split');
  const profile = path.join(conf, 'p.json');
  writeReadableFile(profile, JSON.stringify({ mcpcell: { tools: { deny: ['write_file'] } } }));
  const server = String.raw`
import io, json, sys
for line in io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"):
    print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": line}}), flush=True)
`;
  const denied = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{}}}';
  const outer = (br) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{}},"x":${br}${denied}${br}}`;
  const input = [outer('\r'), outer(' \r ')].join('\n') + '\n';
  const r = await runInCell(['--permission-profile', profile], ['/usr/bin/python3', '-c', server], { relay: 'on', input });
  assert.equal(r.code, 0, r.stderr);
  const seen = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((m) => m.method === 'notifications/message').map((m) => m.params.data.trim());
  const calls = seen.flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } })
    .filter((m) => m.method === 'tools/call').map((m) => m.params.name);
  assert.ok(!calls.includes('write_file'), `the Python reader got a write_file call; its lines: ${JSON.stringify(seen)}`);
});
