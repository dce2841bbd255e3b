// The compatibility suite (issue 14): real third-party MCP servers from npm,
// each pinned, installed by mcpcell (`mcpcell install`, outside the cell),
// started in a native cell by `mcpcell run npx://PKG@VERSION` and driven by
// the real SDK client: initialize, tools/list, and a harmless tools/call
// where one exists. Every server runs with no network (`--permission-profile
// none`; the browser servers' registry entries still apply): a call that
// needs its API must come back as an error from the server, never reach the
// internet. API keys are dummies. The table in docs/COMPAT.md is this file's
// result. scripts/test.sh runs it as its own step (e2e-compat), as root.
//
// The installs go to mcpcell's own cache (~/.cache/mcpcell/npx, or
// $XDG_CACHE_HOME), as a user's would: a second run installs nothing.
// COMPAT_ONLY=name,name runs a subset.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { resultText, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

/** Debian's Chromium, the browser the browser servers' registry entries name. */
const CHROMIUM = '/usr/lib/chromium/chromium';
/** A page that needs no network: the browser renders it from the URL itself. */
const PAGE = 'data:text/html,<title>compat-cell-page</title><h1>inside the cell</h1>';
/** A hang guard per server, not a measurement: a cold install of a large one takes minutes. */
const INSTALL_GUARD_MS = 600_000;

// A directory the eslint server lints: a flat config with one rule, one file that breaks it.
const LINT_DIR = makeTempDir('compat-lint');
writeReadableFile(path.join(LINT_DIR, 'eslint.config.mjs'), 'export default [{ rules: { "no-unused-vars": "error" } }];\n');
writeReadableFile(path.join(LINT_DIR, 'unused.js'), 'const neverRead = 1;\n');

/**
 * The answer of a call the server could only make over the network: the
 * server says its request failed (as a tool error, a JSON-RPC error or plain
 * text, each server its own way), and it is still there to say it.
 */
const NETWORK_FAILED = /fetch failed|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|getaddrinfo/;
function offlineError(result) {
  assert.match(resultText(result), NETWORK_FAILED, 'expected the server to report its request failed (the cell has no network)');
}

/** tools/call; a JSON-RPC error answer becomes {isError, content} so a check reads both alike. */
async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    if (e?.code === undefined) throw e;
    return { isError: true, jsonrpcError: true, content: [{ type: 'text', text: e.message }] };
  }
}

/**
 * The suite. `flags` are mcpcell's (before the source), `args` the server's,
 * `tools` the exact number tools/list gives at this version with these flags,
 * `call` a tools/call and a check of its result.
 */
const SERVERS = [
  { pkg: '@modelcontextprotocol/server-sequential-thinking', version: '2026.8.31', tools: 1,
    call: { name: 'sequentialthinking', arguments: { thought: 'one step', nextThoughtNeeded: false, thoughtNumber: 1, totalThoughts: 1 },
      check: (r) => assert.match(resultText(r), /"thoughtNumber": 1/) } },
  { pkg: 'mcp-hello-world', version: '1.1.2', tools: 3,
    call: { name: 'add', arguments: { a: 2, b: 40 }, check: (r) => assert.match(resultText(r), /42/) } },
  { pkg: '@wonderwhy-er/desktop-commander', version: '0.2.52', tools: 26,
    call: { name: 'get_config', arguments: {}, check: (r) => assert.match(resultText(r), /blockedCommands/) } },
  { pkg: '@eslint/mcp', version: '0.3.13', tools: 1, flags: ['--read', LINT_DIR],
    call: { name: 'lint-files', arguments: { filePaths: [path.join(LINT_DIR, 'unused.js')] },
      check: (r) => assert.match(resultText(r), /no-unused-vars/) } },
  { pkg: '@modelcontextprotocol/server-postgres', version: '0.6.2', tools: 1, args: ['postgresql://127.0.0.1:5432/none'],
    call: { name: 'query', arguments: { sql: 'select 1' }, check: offlineError } },
  { pkg: '@upstash/context7-mcp', version: '4.1.1', tools: 2,
    call: { name: 'resolve-library-id', arguments: { query: 'routing', libraryName: 'express' }, check: offlineError } },
  { pkg: '@notionhq/notion-mcp-server', version: '2.5.2', tools: 24, env: { NOTION_TOKEN: 'ntn_dummy' },
    call: { name: 'API-get-self', arguments: {}, check: offlineError } },
  { pkg: 'tavily-mcp', version: '0.2.22', tools: 5, env: { TAVILY_API_KEY: 'tvly-dummy' },
    call: { name: 'tavily_search', arguments: { query: 'mcp' }, check: offlineError } },
  { pkg: 'exa-mcp-server', version: '3.4.1', tools: 2, env: { EXA_API_KEY: 'dummy' },
    call: { name: 'web_search_exa', arguments: { query: 'mcp' }, check: offlineError } },
  { pkg: '@modelcontextprotocol/server-github', version: '2025.4.8', tools: 26, env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy' },
    call: { name: 'search_repositories', arguments: { query: 'mcp' }, check: offlineError } },
  { pkg: '@modelcontextprotocol/server-brave-search', version: '0.6.2', tools: 2, env: { BRAVE_API_KEY: 'dummy' },
    call: { name: 'brave_web_search', arguments: { query: 'mcp' }, check: offlineError } },
  { pkg: '@modelcontextprotocol/server-slack', version: '2025.4.25', tools: 8, env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T0' },
    call: { name: 'slack_list_channels', arguments: {}, check: offlineError } },
  { pkg: '@modelcontextprotocol/server-google-maps', version: '0.6.2', tools: 7, env: { GOOGLE_MAPS_API_KEY: 'dummy' },
    call: { name: 'maps_geocode', arguments: { address: 'Paris' }, check: offlineError } },
  { pkg: 'firecrawl-mcp', version: '3.26.0', tools: 29, env: { FIRECRAWL_API_KEY: 'fc-dummy' },
    call: { name: 'firecrawl_scrape', arguments: { url: 'https://example.com' }, check: offlineError } },
  { pkg: '@sentry/mcp-server', version: '0.39.0', tools: 9, env: { SENTRY_ACCESS_TOKEN: 'dummy' },
    call: { name: 'find_organizations', arguments: {}, check: (r) => assert.match(resultText(r), /Unable to connect to https:\/\/sentry\.io.*Hostname not found/s) } },
  { pkg: 'mongodb-mcp-server', version: '3.0.4', tools: 27,
    call: { name: 'list-connections', arguments: {}, check: (r) => assert.deepEqual(r.structuredContent, { connections: [] }) } },
  { pkg: 'figma-developer-mcp', version: '0.13.2', tools: 2, env: { FIGMA_API_KEY: 'dummy' }, args: ['--stdio'],
    call: { name: 'get_figma_data', arguments: { fileKey: 'abc' }, check: offlineError } },
  { pkg: '@perplexity-ai/mcp-server', version: '1.2.1', tools: 4, env: { PERPLEXITY_API_KEY: 'dummy' },
    call: { name: 'perplexity_ask', arguments: { messages: [{ role: 'user', content: 'hi' }] }, check: offlineError } },
  { pkg: '@circleci/mcp-server-circleci', version: '0.20.0', tools: 13, env: { CIRCLECI_TOKEN: 'dummy' },
    call: { name: 'get_build_failure_logs', arguments: { params: { projectURL: 'https://app.circleci.com/pipelines/gh/a/b/1/workflows/x/jobs/2' } },
      check: offlineError } },
  { pkg: '@winor30/mcp-server-datadog', version: '1.8.0', tools: 21, env: { DATADOG_API_KEY: 'dummy', DATADOG_APP_KEY: 'dummy' },
    call: { name: 'list_incidents', arguments: {}, check: offlineError } },
  { pkg: '@antv/mcp-server-chart', version: '0.9.10', tools: 27,  // it renders on antv's service
    call: { name: 'generate_bar_chart', arguments: { data: [{ category: 'a', value: 1 }] }, check: offlineError } },
  { pkg: '@shortcut/mcp', version: '0.25.0', tools: 56, env: { SHORTCUT_API_TOKEN: 'dummy' },
    call: { name: 'users-get-current', arguments: {}, check: offlineError } },
  // Browser servers (issue 14 item 6): nothing but the registry entry makes them
  // work (Debian's Chromium, headless, its own sandbox off, said on stderr).
  { pkg: '@playwright/mcp', version: '0.0.83', tools: 25, browser: true,
    call: { name: 'browser_navigate', arguments: { url: PAGE }, check: (r) => assert.match(resultText(r), /Page Title: compat-cell-page/) } },
  { pkg: '@modelcontextprotocol/server-puppeteer', version: '2025.5.12', tools: 7, browser: true,
    call: { name: 'puppeteer_navigate', arguments: { url: PAGE }, then: { name: 'puppeteer_evaluate', arguments: { script: 'document.title' } },
      check: (r) => assert.match(resultText(r), /compat-cell-page/) } },
  { pkg: 'chrome-devtools-mcp', version: '1.11.0', tools: 32, browser: true,
    call: { name: 'new_page', arguments: { url: PAGE }, check: (r) => assert.match(resultText(r), /compat-cell-page \(data:/) } },
];

/** What mcpcell needs from this environment: PATH for npm, HOME or XDG_CACHE_HOME for its cache, the CA bundle. */
function mcpcellEnv() {
  const env = {};
  for (const k of ['PATH', 'HOME', 'XDG_CACHE_HOME', 'NODE_EXTRA_CA_CERTS', 'LANG']) {
    if (process.env[k] !== undefined) env[k] = process.env[k];
  }
  const bundle = '/etc/ssl/certs/ca-certificates.crt';
  if (env.NODE_EXTRA_CA_CERTS === undefined && existsSync(bundle)) env.NODE_EXTRA_CA_CERTS = bundle;
  return env;
}

function envFlags(env = {}) {
  return Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
}

async function connect(t, s) {
  const source = `npx://${s.pkg}@${s.version}`;
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN,
    args: ['run', '--permission-profile', 'none', ...envFlags(s.env), ...(s.flags ?? []), source, ...(s.args ?? [])],
    env: mcpcellEnv(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'mcpcell-compat', version: '0' });
  t.after(() => client.close());
  try {
    await client.connect(transport);
  } catch (e) {
    assert.fail(`${source}: initialize through mcpcell failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
  }
  return { client, stderr: () => stderr };
}

// What a registry entry adds (docs/REGISTRY.md), read from --dry-run (nothing
// runs): env defaults lose to --env, its args come before the user's, its
// notice is said; an unrelated server gets none of it.
test('registry entry defaults: --env wins, args first, the notice is said', { timeout: 60_000 }, async (t) => {
  const dry = async (args) => {
    const r = await runMcpcell(['run', '--dry-run', ...args], { env: mcpcellEnv() });
    assert.equal(r.code, 0, r.stderr);
    return { cell: JSON.parse(r.stdout).cell, stderr: r.stderr };
  };
  const pw = await dry(['--permission-profile', 'none', '--env', 'PLAYWRIGHT_MCP_HEADLESS=false', 'npx://@playwright/mcp@0.0.83']);
  assert.equal(pw.cell.env.PLAYWRIGHT_MCP_EXECUTABLE_PATH, CHROMIUM);
  assert.equal(pw.cell.env.PLAYWRIGHT_MCP_SANDBOX, 'false');
  assert.equal(pw.cell.env.PLAYWRIGHT_MCP_HEADLESS, 'false', 'the user\'s --env wins over the entry\'s default');
  assert.match(pw.stderr, /mcpcell: playwright: Chromium runs with its own sandbox off/);

  const cd = await dry(['chrome-devtools', '--viewport=800x600']);
  const argv = cd.cell.argv;
  assert.deepEqual(argv.slice(-2), ['--no-performance-crux', '--viewport=800x600'], argv.join(' '));
  assert.ok(argv.includes('--chromeArg=--no-sandbox'), argv.join(' '));

  // A host without Chromium hears it at launch, with the package to install
  // (where Chromium is installed, as root: a mount namespace hides
  // /usr/lib/chromium behind an empty tmpfs; as another user: not checked).
  const missing = /warning: puppeteer needs \/usr\/lib\/chromium\/chromium, which this host does not have; .*apt-get install --no-install-recommends chromium/;
  if (!existsSync(CHROMIUM)) {
    assert.match((await dry(['--permission-profile', 'none', 'puppeteer'])).stderr, missing);
  } else if (process.getuid() === 0) {
    const hidden = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs none /usr/lib/chromium && exec "$0" "$@"',
      MCPCELL_BIN, 'run', '--dry-run', '--permission-profile', 'none', 'puppeteer'], { env: mcpcellEnv(), encoding: 'utf8', timeout: 60_000 });
    assert.equal(hidden.status, 0, hidden.stderr);
    assert.match(hidden.stderr, missing);
  } else {
    t.diagnostic('the missing-Chromium warning is not checked: hiding the installed one needs root (a mount namespace)');
  }
  if (existsSync(CHROMIUM)) assert.doesNotMatch(pw.stderr, /which this host does not have/);

  const other = await dry(['--permission-profile', 'none', 'npx://mcp-hello-world@1.1.2']);
  assert.equal(Object.keys(other.cell.env).filter((k) => k.startsWith('PLAYWRIGHT')).length, 0);
  assert.doesNotMatch(other.stderr, /sandbox off/);
});

const only = process.env.COMPAT_ONLY ? process.env.COMPAT_ONLY.split(',') : null;
const rows = [];

for (const s of SERVERS) {
  if (only && !only.includes(s.pkg)) continue;
  test(`compat: ${s.pkg}@${s.version}`, { timeout: INSTALL_GUARD_MS + 120_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    if (s.browser && !existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is missing: install Debian's chromium (apt-get install --no-install-recommends chromium)`);
      return;
    }
    const row = { server: s.pkg, version: s.version };
    rows.push(row);
    const t0 = Date.now();
    const installed = await runMcpcell(['install', `npx://${s.pkg}@${s.version}`], { env: mcpcellEnv(), guardMs: INSTALL_GUARD_MS });
    assert.equal(installed.code, 0, `mcpcell install failed:\n${installed.stderr}`);
    row.install_ms = Date.now() - t0;

    const t1 = Date.now();
    const { client, stderr } = await connect(t, s);
    const { tools } = await client.listTools();
    row.tools = tools.length;
    assert.equal(tools.length, s.tools, `tools/list: ${tools.map((x) => x.name).join(', ')}\n${stderr()}`);
    if (s.call) {
      let result = await call(client, s.call.name, s.call.arguments);
      if (s.call.then) result = await call(client, s.call.then.name, s.call.then.arguments);
      const kind = result.jsonrpcError ? 'JSON-RPC error: ' : result.isError ? 'tool error: ' : '';
      row.call = `${s.call.then?.name ?? s.call.name} → ${kind}${resultText(result).replace(/\s+/g, ' ').slice(0, 90)}`;
      s.call.check(result);
    }
    if (s.browser) {
      // The trade-off is said, every launch (docs/THREAT_MODEL.md, Browser servers).
      assert.match(stderr(), /Chromium runs with its own sandbox off \(--no-sandbox\)/, stderr());
    }
    row.run_ms = Date.now() - t1;
    row.pass = true;
  });
}

after(() => {
  const passed = rows.filter((r) => r.pass).length;
  for (const r of rows) {
    process.stderr.write(`compat-row ${JSON.stringify(r)}\n`);
  }
  process.stderr.write(`compat: ${passed} of ${rows.length} servers passed\n`);
});
