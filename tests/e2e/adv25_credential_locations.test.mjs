// Adversary pass adv25: common credential files still not credential
// locations after adv23 added podman's, git's XDG store and more: a cell
// granted a home (`--read ~`, any backend) reads them.
//
// Finding (MEDIUM: each is a long-lived token, key or password, handed to any
// server granted the home or a directory holding a copy; the list is what
// mcpcell promises to mask, docs/THREAT_MODEL.md "credential locations"):
// src/cell/credentials.cc:32-122 (kLocations) names none of these, and the
// by-name match (LocationNamedBy, credentials.cc:138) takes only exact
// trailing components, so a neighbour or a variant of a listed name escapes:
//   - AI agents and MCP clients, the programs mcpcell runs beside:
//     ~/.config/github-copilot/{hosts,apps}.json (Copilot's GitHub OAuth
//     token, ghu_...), ~/.gemini/oauth_creds.json (Gemini CLI login),
//     ~/.claude.json (Claude Code keeps user-scope MCP servers there, their
//     `env` tokens included), ~/.cursor/mcp.json and
//     ~/.codeium/windsurf/mcp_config.json (MCP client configs: servers' API
//     keys in `env`).
//   - Spellings next to a listed one: ~/.cache/huggingface/stored_tokens
//     (huggingface_hub >= 0.25 keeps every named token there; only `token`
//     is listed), $XDG_RUNTIME_DIR/containers/auth.json when the runtime dir
//     is not under /run/user (no logind: sshd sessions, WSL, containers;
//     only `.config/containers/auth.json` is listed), id_ed25519_sk /
//     id_ecdsa_sk (OpenSSH's FIDO key names: `id_ed25519` matches only
//     exactly), and shell histories under other names: ~/.zhistory
//     (prezto), ~/.local/state/zsh/history and ~/.local/share/fish/fish_history
//     (XDG), ~/.sh_history (ksh), ~/.rediscli_history (AUTH passwords).
//   - Tokens of other common CLIs: ~/.config/glab-cli/config.yml (GitLab),
//     ~/.terraformrc (its `credentials` block; only
//     .terraform.d/credentials.tfrc.json is listed), ~/.config/pypoetry/auth.toml,
//     ~/.kaggle/kaggle.json, ~/.config/sops/age/keys.txt (age private keys),
//     ~/.mc/config.json (MinIO), ~/.passwd-s3fs, ~/.mylogin.cnf (MySQL; only
//     .my.cnf is listed), ~/.pulumi/credentials.json,
//     ~/.config/openstack/clouds.yaml, ~/.bundle/config,
//     ~/.local/share/com.vercel.cli/auth.json,
//     ~/.config/configstore/firebase-tools.json, ~/.fly/config.yml,
//     ~/.config/hcloud/cli.toml, ~/.config/ngrok/ngrok.yml, ~/.dbt/profiles.yml,
//     ~/.snowflake/connections.toml, ~/.ivy2/.credentials,
//     ~/.nuget/NuGet/NuGet.Config, ~/.wrangler/config/default.toml.
//   Reproduce: echo tok > ~/.cache/huggingface/stored_tokens;
//     mcpcell run --read ~ -- cat ~/.cache/huggingface/stored_tokens   (prints tok)
//   Suggested fix: add these to kLocations (file_only where a directory of
//   that name is something else), `containers/auth.json` by its last two
//   components (wherever the runtime dir is), and `_sk` variants of the SSH
//   key names; one unit test per name in tests/unit/credentials_test.cc.
//
// Bounded: one native cell per test (60 s guard); the fake home is removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { MCPCELL_BIN } from './lib/paths.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const AGENT_FILES = [
  '.config/github-copilot/hosts.json',
  '.config/github-copilot/apps.json',
  '.gemini/oauth_creds.json',
  '.claude.json',
  '.cursor/mcp.json',
  '.codeium/windsurf/mcp_config.json',
];

const NEIGHBOUR_NAMES = [
  '.cache/huggingface/stored_tokens',
  'runtime-dir/containers/auth.json',
  '.ssh-backup/id_ed25519_sk',
  'keys/id_ecdsa_sk',
  '.zhistory',
  '.local/state/zsh/history',
  '.local/share/fish/fish_history',
  '.sh_history',
  '.rediscli_history',
];

const CLI_TOKENS = [
  '.config/glab-cli/config.yml',
  '.terraformrc',
  '.config/pypoetry/auth.toml',
  '.kaggle/kaggle.json',
  '.config/sops/age/keys.txt',
  '.mc/config.json',
  '.passwd-s3fs',
  '.mylogin.cnf',
  '.pulumi/credentials.json',
  '.config/openstack/clouds.yaml',
  '.bundle/config',
  '.local/share/com.vercel.cli/auth.json',
  '.config/configstore/firebase-tools.json',
  '.fly/config.yml',
  '.config/hcloud/cli.toml',
  '.config/ngrok/ngrok.yml',
  '.dbt/profiles.yml',
  '.snowflake/connections.toml',
  '.ivy2/.credentials',
  '.nuget/NuGet/NuGet.Config',
  '.wrangler/config/default.toml',
];

/** The files of `rels` a native `--read HOME` cell could read, HOME a fresh fake home holding them all. */
function readableInCell(rels) {
  const home = mkdtempSync('/var/tmp/e2e-adv25-creds-');
  dirs.push(home);
  for (const rel of rels) {
    mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    writeFileSync(path.join(home, rel), `SECRET-adv25:${rel}\n`);
  }
  spawnSync('chmod', ['-R', 'a+rX', home]);
  chmodSync(home, 0o755);
  const cat = rels.map((rel) => `cat '${path.join(home, rel)}' 2>/dev/null`).join('; ');
  const r = spawnSync(MCPCELL_BIN, ['run', '--relay=off', '--read', home, '--', '/bin/sh', '-c', `${cat}; echo done`],
    { encoding: 'utf8', input: '', timeout: 60_000 });
  assert.match(r.stdout, /done/, `the cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
  return [...r.stdout.matchAll(/SECRET-adv25:(\S+)/g)].map((m) => m[1]);
}

for (const [what, rels, todo] of [
  ['AI agents\' and MCP clients\' logins and configs', AGENT_FILES,
    'adv25: Copilot, Gemini CLI, ~/.claude.json and MCP client configs are not credential locations'],
  ['neighbours and variants of listed names', NEIGHBOUR_NAMES,
    'adv25: stored_tokens, containers/auth.json outside .config, *_sk keys, other shells\' histories escape the by-name match'],
  ['other CLIs\' tokens', CLI_TOKENS, 'adv25: glab, terraformrc, poetry, kaggle, age, minio, mylogin, ... are not credential locations'],
]) {
  test(`a cell granted a home reads none of: ${what}`, { todo, timeout: 90_000 }, () => {
    const leaked = readableInCell(rels);
    assert.deepEqual(leaked, [], `read through --read HOME: ${leaked.join(', ')}`);
  });
}
