// Issue 14, "wire the clients in one command": `mcpcell client list` finds
// the MCP configs of the clients on this machine, `client wrap CLIENT`
// rewrites each stdio server to start through mcpcell and `client unwrap`
// puts them back. Every test uses a HOME of its own: no real config is read
// or touched. The proof that a wrapped file works is a real client reading
// it: the MCP Inspector CLI (--config FILE --server NAME) lists and calls the
// tools of server-everything and server-filesystem, each through mcpcell.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN, NODE_MODULES, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

/** A fresh home with `files` ({relative path: text}) written in it. */
function homeWith(files) {
  const home = makeTempDir('clients-home');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    writeReadableFile(path.join(home, rel), text);
  }
  return home;
}

function envFor(home) {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
}

const client = (home, args) => runMcpcell(['client', ...args], { env: envFor(home) });

// A Cursor config as people write it: JSONC (comments, trailing commas), a
// remote server, an npx server with an API key in its env block, a docker
// server, one that cannot be mapped, and arguments a shell would expand.
const CURSOR_JSONC = `{
  // servers I use
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8", "$(touch /tmp/pwned)", "a b", "--flag=\`id\`"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy" }, /* kept in this file */
    },
    "docs": { "url": "https://example.com/mcp" },
    "image": { "command": "docker", "args": ["run", "-i", "--rm", "-e", "API_KEY", "mcp/fetch:1.0"] },
    "hostroot": { "command": "docker", "args": ["run", "-i", "-v", "/:/host", "mcp/fetch:1.0"] },
    "local": { "command": "/usr/bin/python3", "args": ["server.py", ";", "rm -rf ~"] },
  },
  "theme": "dark", // another setting
}
`;

test('client list finds each client\'s config in its documented place and format', async () => {
  const home = homeWith({
    '.config/Claude/claude_desktop_config.json': '{"mcpServers": {"a": {"command": "npx", "args": ["-y", "pkg"]}}}',
    '.claude.json': '{"numStartups": 3, "mcpServers": {"b": {"type": "http", "url": "https://x/mcp"}}, '
      + '"projects": {"/home/me/site": {"mcpServers": {"b2": {"command": "npx", "args": ["-y", "pkg"]}}}}}',
    '.cursor/mcp.json': CURSOR_JSONC,
    '.config/Code/User/mcp.json': '{ "servers": { "c": { "type": "stdio", "command": "node", "args": ["s.js"] } } }',
    '.codeium/windsurf/mcp_config.json': '{"mcpServers": {"d": {"serverUrl": "https://x/sse"}}}',
    '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json':
      '{"mcpServers": {"e": {"command": "uvx", "args": ["mcp-server-git"], "disabled": false, "alwaysAllow": []}}}',
    '.config/zed/settings.json': '// Zed settings\n{ "context_servers": { "f": { "command": "some-command", "args": [], "env": {} } }, }',
    '.gemini/settings.json': '{"mcpServers": {"g": {"httpUrl": "https://x/mcp"}}}',
    '.codex/config.toml': 'model = "o3"\n[mcp_servers.h]\ncommand = "npx"\nargs = ["-y", "x"]\n[mcp_servers.h.env]\nK = "v"\n[mcp_servers."i"]\nurl = "https://x"\n',
    '.config/goose/config.yaml': 'extensions:\n  j:\n    type: stdio\n    cmd: npx\n',
  });
  const r = await client(home, ['list', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const byId = Object.fromEntries(JSON.parse(r.stdout).map((c) => [c.client, c]));
  const names = (id) => (byId[id].servers ?? []).map((s) => `${s.name}=${s.kind}`);
  assert.deepEqual(names('claude-desktop'), ['a=stdio: npx']);
  assert.deepEqual(names('claude-code'), ['b=remote', '/home/me/site: b2=stdio: npx']);  // user and local scope
  assert.deepEqual(names('cursor'), ['github=stdio: npx', 'docs=remote', 'image=stdio: docker', 'hostroot=stdio: docker', 'local=stdio: /usr/bin/python3']);
  assert.deepEqual(names('vscode'), ['c=stdio: node']);
  assert.deepEqual(names('windsurf'), ['d=remote']);
  assert.deepEqual(names('cline'), ['e=stdio: uvx']);
  assert.deepEqual(names('zed'), ['f=stdio: some-command']);
  assert.deepEqual(names('gemini'), ['g=remote']);
  assert.deepEqual(names('codex'), ['h=stdio: npx', 'i=remote']);
  assert.deepEqual(names('goose'), ['j=stdio: npx']);
  for (const c of Object.values(byId)) assert.ok(!c.error, `${c.client}: ${c.error}`);
});

test('wrap --dry-run shows the change on stderr and writes nothing; wrap rewrites only the stdio entries, keeps everything else, is idempotent; unwrap restores the file byte for byte', async () => {
  const home = homeWith({ '.cursor/mcp.json': CURSOR_JSONC });
  const file = path.join(home, '.cursor/mcp.json');
  chmodSync(file, 0o640);
  const group = process.getuid() === 0 ? 65534 : statSync(file).gid;  // as root: a group not ours
  if (process.getuid() === 0) chownSync(file, 0, group);

  const dry = await client(home, ['wrap', 'cursor', '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(readFileSync(file, 'utf8'), CURSOR_JSONC, '--dry-run wrote nothing');
  assert.deepEqual(readdirSync(path.dirname(file)), ['mcp.json'], '--dry-run left no backup');
  assert.match(dry.stderr, /^-\s+"command": "npx",$/m);
  assert.match(dry.stderr, /^\+\s+"npx:\/\/@modelcontextprotocol\/server-github@2025\.4\.8",$/m);
  assert.ok(!dry.stderr.includes('ghp_dummy'), 'the diff does not show env values (API keys)');
  assert.match(dry.stderr, /"GITHUB_PERSONAL_ACCESS_TOKEN": "<value not shown>"/);
  assert.equal(dry.stdout, '');

  const r = await client(home, ['wrap', 'cursor']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /docs: left alone: a remote \(URL\) server/);
  assert.match(r.stderr, /hostroot: left as it is: docker run option -v has no docker:\/\/ equivalent/);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /\/\/ servers I use/, 'comments outside the rewritten entries stay');
  assert.match(text, /"theme": "dark", \/\/ another setting/);
  // The file's own comments and trailing commas taken out (the ones this test wrote), then strict JSON.
  const strict = text.replace('// servers I use', '').replace('// another setting', '').replace(/,(\s*[}\]])/g, '$1');
  const servers = JSON.parse(strict).mcpServers;
  const self = servers.github.command;
  assert.ok(path.isAbsolute(self) && path.basename(self) === 'mcpcell', self);
  // Arguments stay one array element each, exactly: no shell ever sees them.
  assert.deepEqual(servers.github.args, ['run', '--env=GITHUB_PERSONAL_ACCESS_TOKEN',
    'npx://@modelcontextprotocol/server-github@2025.4.8', '--', '$(touch /tmp/pwned)', 'a b', '--flag=`id`']);
  assert.deepEqual(servers.github.env, { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy' }, 'the value stays in the client\'s env block');
  assert.ok(!servers.github.args.some((a) => a.includes('ghp_dummy')), 'a secret value never lands in argv');
  assert.deepEqual(servers.image.args, ['run', '--env=API_KEY', 'docker://mcp/fetch:1.0']);
  assert.deepEqual(servers.hostroot, { command: 'docker', args: ['run', '-i', '-v', '/:/host', 'mcp/fetch:1.0'] });
  assert.deepEqual(servers.local.args, ['run', '--isolate', '--', '/usr/bin/python3', 'server.py', ';', 'rm -rf ~']);
  assert.deepEqual(servers.docs, { url: 'https://example.com/mcp' });
  assert.equal(statSync(file).mode & 0o777, 0o640, 'the file keeps its mode');
  assert.equal(statSync(file).gid, group, 'the file keeps its group');
  const kept = readdirSync(path.dirname(file)).filter((n) => n.startsWith('mcp.json.mcpcell-'));
  assert.equal(kept.length, 2, kept.join(' '));  // one backup, the originals for unwrap
  for (const n of kept) assert.equal(statSync(path.join(path.dirname(file), n)).mode & 0o777, 0o600, `${n} is owner-only`);
  const backup = kept.find((n) => n.includes('backup'));
  assert.equal(readFileSync(path.join(path.dirname(file), backup), 'utf8'), CURSOR_JSONC);

  const again = await client(home, ['wrap', 'cursor']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(file, 'utf8'), text, 'wrapping twice changes nothing');
  assert.match(again.stderr, /nothing to change/);

  const un = await client(home, ['unwrap', 'cursor']);
  assert.equal(un.code, 0, un.stderr);
  assert.equal(readFileSync(file, 'utf8'), CURSOR_JSONC, 'unwrap restores the file byte for byte, comments inside entries too');
  assert.ok(!existsSync(`${file}.mcpcell-originals.json`), 'nothing left to restore');
});

// The other JSON/JSONC clients, each in its own documented place and key
// (VS Code "servers" with a "type", Zed "context_servers" in settings that
// hold other things, Windsurf's remote "serverUrl", Cline's extra keys,
// Gemini's "httpUrl"): wrap rewrites their stdio entries only, keeps every
// other key and comment, is idempotent, and unwrap gives the bytes back.
test('VS Code, Zed, Windsurf, Cline, Gemini CLI: wrap rewrites only stdio entries, keeps the rest, unwrap restores byte for byte', async () => {
  const files = {
    vscode: ['.config/Code/User/mcp.json', 'servers', `{
  // VS Code
  "servers": {
    "fs": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/srv/docs"] },
    "web": { "type": "http", "url": "https://example.com/mcp" }
  },
  "inputs": [],
}
`],
    zed: ['.config/zed/settings.json', 'context_servers', `// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "mem": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2025.8.4"], "env": {} },
  },
}
`],
    windsurf: ['.codeium/windsurf/mcp_config.json', 'mcpServers', `{"mcpServers": {
  "py": {"command": "/usr/bin/python3", "args": ["srv.py"]},
  "remote": {"serverUrl": "https://example.com/sse"}
}}
`],
    cline: ['.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json', 'mcpServers', `{"mcpServers": {
  "git": {"command": "uvx", "args": ["mcp-server-git==2025.1.14"], "disabled": false, "alwaysAllow": ["git_status"]}
}}
`],
    gemini: ['.gemini/settings.json', 'mcpServers', `{"theme": "Default", "mcpServers": {
  "img": {"command": "docker", "args": ["run", "-i", "--rm", "mcp/fetch:1.0"], "timeout": 30000},
  "api": {"httpUrl": "https://example.com/mcp"}
}}
`],
  };
  const wantArgs = {
    vscode: { fs: ['run', 'npx://@modelcontextprotocol/server-filesystem@2025.8.21', '--', '/srv/docs'] },
    zed: { mem: ['run', 'npx://@modelcontextprotocol/server-memory@2025.8.4'] },
    windsurf: { py: ['run', '--isolate', '--', '/usr/bin/python3', 'srv.py'] },
    cline: { git: ['run', 'uvx://mcp-server-git@2025.1.14'] },
    gemini: { img: ['run', 'docker://mcp/fetch:1.0'] },
  };
  const untouched = { vscode: ['web'], zed: [], windsurf: ['remote'], cline: [], gemini: ['api'] };
  for (const [id, [rel, key, original]] of Object.entries(files)) {
    const home = homeWith({ [rel]: original });
    const file = path.join(home, rel);
    const r = await client(home, ['wrap', id]);
    assert.equal(r.code, 0, `${id}: ${r.stderr}`);
    const text = readFileSync(file, 'utf8');
    const strict = JSON.parse(text.replace(/^\s*\/\/.*$/mg, '').replace(/,(\s*[}\]])/g, '$1'));
    for (const [name, args] of Object.entries(wantArgs[id])) {
      const entry = strict[key][name];
      assert.equal(path.basename(entry.command), 'mcpcell', `${id}/${name}: ${JSON.stringify(entry)}`);
      assert.deepEqual(entry.args, args, `${id}/${name}`);
    }
    for (const name of untouched[id]) {
      assert.deepEqual(strict[key][name], JSON.parse(original.replace(/^\s*\/\/.*$/mg, '').replace(/,(\s*[}\]])/g, '$1'))[key][name],
        `${id}/${name} (remote) left as it was`);
    }
    if (id === 'vscode') assert.equal(strict.servers.fs.type, 'stdio', 'VS Code keeps the entry\'s type');
    if (id === 'cline') assert.deepEqual(strict.mcpServers.git.alwaysAllow, ['git_status'], 'Cline keeps its own keys');
    if (id === 'gemini') assert.equal(strict.mcpServers.img.timeout, 30000);
    if (id === 'zed') assert.match(text, /^\/\/ Zed settings$/m, 'comments stay');
    const again = await client(home, ['wrap', id]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(readFileSync(file, 'utf8'), text, `${id}: wrapping twice changes nothing`);
    const un = await client(home, ['unwrap', id]);
    assert.equal(un.code, 0, un.stderr);
    assert.equal(readFileSync(file, 'utf8'), original, `${id}: unwrap restores the file byte for byte`);
  }
});

const CODEX_TOML = `model = "o3"  # mine

[mcp_servers.github]
command = "npx" # from the README
args = ["-y", "@modelcontextprotocol/server-github@2025.4.8", "$(id)", 'lit\\eral', "é"]
startup_timeout_sec = 30

[mcp_servers.github.env]
GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_dummy"

[mcp_servers.plain]
command = "/usr/bin/node"

[mcp_servers.docs]
url = "https://example.com/mcp"

[profiles.a]
model = "x"
`;

test('Codex (TOML): wrap changes only command and args, keeps comments and tables, is idempotent; unwrap restores byte for byte', async () => {
  const home = homeWith({ '.codex/config.toml': CODEX_TOML });
  const file = path.join(home, '.codex/config.toml');
  const r = await client(home, ['wrap', 'codex']);
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(file, 'utf8');
  const self = text.match(/^command = "(.*)" # from the README$/m)?.[1];
  assert.ok(self && path.basename(self) === 'mcpcell', text);
  assert.ok(text.includes('args = ["run", "--env=GITHUB_PERSONAL_ACCESS_TOKEN", "npx://@modelcontextprotocol/server-github@2025.4.8", "--", "$(id)", "lit\\\\eral", "é"]'), text);
  assert.ok(text.includes('[mcp_servers.plain]\ncommand = "' + self + '"\nargs = ["run", "--isolate", "--", "/usr/bin/node"]\n'), text);
  assert.ok(text.includes('GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_dummy"') && text.includes('[profiles.a]') && text.includes('# mine'));
  assert.match(r.stderr, /docs: left alone: a remote/);
  const again = await client(home, ['wrap', 'codex']);
  assert.equal(readFileSync(file, 'utf8'), text, again.stderr);
  const un = await client(home, ['unwrap', 'codex']);
  assert.equal(un.code, 0, un.stderr);
  assert.equal(readFileSync(file, 'utf8'), CODEX_TOML);
});

const GOOSE_YAML = `GOOSE_PROVIDER: anthropic  # mine
extensions:
  developer:
    enabled: true
    type: builtin
  github:
    cmd: npx # from the docs
    args:
      - -y
      - "@modelcontextprotocol/server-github@2025.4.8"
      - $(id) é
    envs: { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy" }
    type: stdio
  plain: {type: stdio, cmd: /usr/bin/node}
  remote:
    type: streamable_http
    uri: https://example.com/mcp
`;

test('Goose (YAML): wrap changes only cmd and args, keeps comments and other keys, is idempotent; unwrap restores byte for byte', async () => {
  const home = homeWith({ '.config/goose/config.yaml': GOOSE_YAML });
  const file = path.join(home, '.config/goose/config.yaml');
  const r = await client(home, ['wrap', 'goose']);
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(file, 'utf8');
  const self = text.match(/^ {4}cmd: "(.*)" # from the docs$/m)?.[1];
  assert.ok(self && path.basename(self) === 'mcpcell', text);
  assert.ok(text.includes('    args:\n      ["run", "--env=GITHUB_PERSONAL_ACCESS_TOKEN", "npx://@modelcontextprotocol/server-github@2025.4.8", "--", "$(id) é"]\n'), text);
  assert.ok(text.includes(`  plain: {type: stdio, cmd: "${self}", args: ["run", "--isolate", "--", "/usr/bin/node"]}`), text);
  assert.match(r.stderr, /developer: left as it is: a Goose 'builtin' extension/);
  assert.match(r.stderr, /remote: left alone: a remote/);
  const again = await client(home, ['wrap', 'goose']);
  assert.equal(readFileSync(file, 'utf8'), text, again.stderr);
  const un = await client(home, ['unwrap', 'goose']);
  assert.equal(un.code, 0, un.stderr);
  assert.equal(readFileSync(file, 'utf8'), GOOSE_YAML);
});

test('wrap refuses a symlinked config, one owned by another user, an unknown client and a missing --policy; writes nothing', async (t) => {
  const home = homeWith({ 'real.json': '{"mcpServers": {"a": {"command": "node", "args": ["s.js"]}}}' });
  mkdirSync(path.join(home, '.cursor'));
  symlinkSync(path.join(home, 'real.json'), path.join(home, '.cursor/mcp.json'));
  const link = await client(home, ['wrap', 'cursor']);
  assert.equal(link.code, 1);
  assert.match(link.stderr, /is a symlink; mcpcell does not write through symlinks/);
  assert.match(readFileSync(path.join(home, 'real.json'), 'utf8'), /"command": "node"/);

  const unknown = await client(home, ['wrap', 'cursr']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown client; one of: claude-desktop, claude-code, cursor/);
  const policy = await client(home, ['wrap', 'cursor', '--file', path.join(home, 'real.json'), '--policy', '/nonexistent/p.json']);
  assert.equal(policy.code, 2);
  assert.match(policy.stderr, /--policy \/nonexistent\/p\.json: no such file/);
  const broken = homeWith({ '.config/goose/config.yaml': 'extensions:\n  a: &x {type: stdio, cmd: node}\n  b: *x\n' });
  const anchors = await client(broken, ['wrap', 'goose']);
  assert.equal(anchors.code, 0, anchors.stderr);
  assert.match(anchors.stderr, /a: left as it is: uses YAML anchors or aliases/);
  assert.match(anchors.stderr, /nothing to change/);

  if (process.getuid() !== 0) {
    t.diagnostic('the other-owner case needs root to make a file owned by someone else: not run');
    return;
  }
  const other = path.join(home, 'other.json');
  writeReadableFile(other, '{"mcpServers": {"a": {"command": "node", "args": ["s.js"]}}}');
  chownSync(other, 65534, 65534);
  const r = await client(home, ['wrap', 'cursor', '--file', other]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is owned by uid 65534, not by you \(uid 0\): run mcpcell client as the file's owner/);
});

/** Runs the Inspector CLI on `config`; resolves to {code, stdout, stderr}. */
function inspector(home, config, server, method, extra = []) {
  const bin = path.join(NODE_MODULES, '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm install --prefer-offline\` in tests/e2e`);
  const ca = '/etc/ssl/certs/ca-certificates.crt';
  const env = { ...envFor(home), MCP_INSPECTOR_SECRET_STORE: 'memory', ...(existsSync(ca) ? { NODE_EXTRA_CA_CERTS: ca } : {}) };
  return new Promise((resolve) => {
    const child = spawn(NODE_BIN, [bin, '--cli', '--config', config, '--server', server, '--method', method, ...extra],
      { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 240_000); // a hang guard: npx:// installs from npm
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
}

test('a real client reads the wrapped file: the Inspector CLI lists and calls tools of server-everything and server-filesystem through mcpcell', { timeout: 600_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const data = makeWritableDir('clients-data');
  writeReadableFile(path.join(data, 'notes.txt'), 'hello through the wrapped config\n');
  const config = {
    mcpServers: {
      everything: { command: NODE_BIN, args: [serverEntry('server-everything'), 'stdio'], env: { DEMO_TOKEN: 't0k-e2e' } },
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', data] },
      remote: { type: 'http', url: 'https://example.com/mcp' },
    },
  };
  const home = homeWith({ '.config/Claude/claude_desktop_config.json': JSON.stringify(config, null, 2) });
  const file = path.join(home, '.config/Claude/claude_desktop_config.json');
  const w = await client(home, ['wrap', 'claude-desktop']);
  assert.equal(w.code, 0, w.stderr);
  const wrapped = JSON.parse(readFileSync(file, 'utf8')).mcpServers;
  assert.equal(path.basename(wrapped.everything.command), 'mcpcell');
  assert.equal(path.basename(wrapped.files.command), 'mcpcell');

  const list = await inspector(home, file, 'everything', 'tools/list');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /"name": "echo"/);
  // The env block reached the server through mcpcell's --env NAME.
  const env = await inspector(home, file, 'everything', 'tools/call', ['--tool-name', 'get-env']);
  assert.equal(env.code, 0, env.stderr);
  assert.match(env.stdout, /DEMO_TOKEN\\?": \\?"t0k-e2e/);

  const read = await inspector(home, file, 'files', 'tools/call',
    ['--tool-name', 'read_text_file', '--tool-arg', `path=${path.join(data, 'notes.txt')}`]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /hello through the wrapped config/);
  assert.match(read.stderr, /installing @modelcontextprotocol\/server-filesystem@2026\.8\.31 outside the cell/,
    'the server ran from mcpcell\'s npx:// install, not from npx');
});

test('text from a config reaches the terminal made visible: a server name with escape sequences does not drive it', async () => {
  const home = homeWith({ '.cursor/mcp.json': '{"mcpServers": {"a\\u001b]0;pwned\\u0007\\u001b[2J": {"command": "node", "args": ["s.js"]}}}' });
  for (const args of [['list'], ['wrap', 'cursor', '--dry-run']]) {
    const r = await client(home, args);
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout + r.stderr;
    assert.ok(!out.includes('\u001b') && !out.includes('\u0007'), `${args.join(' ')} printed a raw control character`);
    assert.match(out, /a\^\[\]0;pwned\^G\^\[\[2J/);
  }
});
