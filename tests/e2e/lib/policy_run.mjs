// Runs decided by a policy, for the adversary tests of command trust and
// allowed sources (adv10, adv11, adv13, adv14): policy files written under a
// test's root, `policy explain --json` and `run --policy` from the trusted
// servers' directory, with a fixed PATH, the caller's HOME and no other
// variable of the test runner's.

import path from 'node:path';

import { runMcpcell } from './mcpcell.mjs';
import { writeReadableFile } from './tmp.mjs';

export const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const GUARD = { guardMs: 60_000 };

/** The environment of every run: BASE_PATH, HOME, LANG, then `extra`. */
export const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', ...extra });

/**
 * The helpers of one test file. `root`: where its files go; `srv`: the
 * directory of servers the policy trusts (the default cwd of explain and
 * runByPolicy); `denyName`: a name
 * glob the policy denies before anything is trusted (none when omitted).
 */
export function policyRunner({ root, srv, denyName }) {
  let fileCount = 0;

  /** A fresh readable file in root holding `text` (JSON of an object). */
  function file(name, text) {
    const p = path.join(root, `${fileCount++}-${name}`);
    writeReadableFile(p, typeof text === 'string' ? text : JSON.stringify(text, null, 2));
    return p;
  }

  /** A policy: [deny denyName,] allow what `trusted` matches, isolate the rest. */
  function trustPolicy(trusted) {
    const deny = denyName ? [{ name: 'no-evil', condition: { name: denyName }, action: 'deny' }] : [];
    return file('policy.json', {
      trusted_sources: trusted,
      rules: [...deny, { name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }],
      default: 'isolate',
    });
  }

  /**
   * A policy that trusts exactly `sources` (one or a list) and allows them
   * with no cell; nothing else is said (the built-in default decides the rest).
   */
  function trusting(sources) {
    return file('policy.json', {
      trusted_sources: [sources].flat(),
      rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }],
    });
  }

  /** `mcpcell policy explain --json --policy P -- COMMAND`: {action, source, script, r, j}. */
  async function explain(policy, command, { cwd = srv, extraEnv = {}, flags = [] } = {}) {
    const r = await runMcpcell(['policy', 'explain', '--json', '--policy', policy, ...flags, '--', ...command],
      { cwd, env: env(extraEnv), ...GUARD });
    let j = null;
    try {
      j = JSON.parse(r.stdout);
    } catch {
      // refused: no JSON
    }
    return { action: j?.action ?? null, source: j?.trust_facts?.source ?? null, script: j?.trust_facts?.script ?? null, r, j };
  }

  /** `mcpcell run --policy P [flags] -- COMMAND` with no stdin; the run is decided by the policy. */
  function runByPolicy(policy, command, { cwd = srv, extraEnv = {}, flags = [] } = {}) {
    return runMcpcell(['run', '--policy', policy, ...flags, '--', ...command], { input: '', cwd, env: env(extraEnv), ...GUARD });
  }

  return { file, trustPolicy, trusting, explain, runByPolicy };
}
