// Where things are: the mcpcell binary under test, this test tree, the npm
// servers it runs, and the node binary (which must be reachable inside a cell).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** tests/e2e (or its staged copy: scripts/test.sh may copy the tree elsewhere). */
export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The repository root when the tests run in place (default location of build/mcpcell). */
export const REPO_DIR = path.resolve(E2E_DIR, '..', '..');

/** The binary under test: $MCPCELL_BIN, else <repo>/build/mcpcell. */
export const MCPCELL_BIN = path.resolve(process.env.MCPCELL_BIN ?? path.join(REPO_DIR, 'build', 'mcpcell'));

/** node_modules of the e2e tree: every npm server needs it bound (read-only) into its cell. */
export const NODE_MODULES = path.join(E2E_DIR, 'node_modules');

/** The node that runs this test; servers in cells run the same one. */
export const NODE_BIN = process.execPath;

/** Entry script of one of the pinned reference servers, e.g. serverEntry('server-everything'). */
export function serverEntry(name) {
  const p = path.join(NODE_MODULES, '@modelcontextprotocol', name, 'dist', 'index.js');
  if (!existsSync(p)) {
    throw new Error(`${p} is missing: run \`npm ci --no-audit --no-fund\` in ${E2E_DIR}`);
  }
  return p;
}

/**
 * Extra mcpcell flags so the cell can see node and the npm packages. The cell
 * binds /usr, /bin, /lib* itself; a node installed elsewhere (nvm, /opt) needs
 * its prefix bound too.
 */
export function nodeCellArgs() {
  const args = ['--read', NODE_MODULES];
  const prefix = path.dirname(path.dirname(NODE_BIN));
  const systemDirs = ['/usr', '/bin', '/lib', '/lib64'];
  if (!systemDirs.some((d) => NODE_BIN.startsWith(d + '/'))) args.push('--read', prefix);
  return args;
}
