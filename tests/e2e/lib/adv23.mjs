// Shared by the adv23 adversary tests (container cells): is there an engine,
// and running mcpcell as the docker-group user scripts/docker.sh creates.

import { spawnSync } from 'node:child_process';

import { engineRequest } from './engine.mjs';
import { MCPCELL_BIN } from './paths.mjs';

export const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
export const DOCKER_USER = process.env.MCPCELL_DOCKER_TEST_USER ?? 'mcpcell-docker';

/** Root's Podman service (scripts/docker.sh ensure_podman). */
export const PODMAN_SOCKET = (process.env.CONTAINER_HOST ?? 'unix:///run/podman/podman.sock').replace(/^unix:\/\//, '');

/** Skips `t` (and returns false) unless the engine on `socket` answers and the run is root. */
export async function needEngineAsRoot(t, socket = SOCKET) {
  if (process.getuid() !== 0) {
    t.skip('switches to the docker-group user and inspects the host: root only');
    return false;
  }
  try {
    const r = await engineRequest(socket, 'GET', '/_ping');
    if (r.status === 200) return true;
  } catch {}
  t.skip(`no container engine on ${socket} (scripts/docker.sh starts docker and podman)`);
  return false;
}

/** The docker-group user's uid, or fails the test naming the fix. */
export function dockerUserUid() {
  const r = spawnSync('id', ['-u', DOCKER_USER], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`no user ${DOCKER_USER}: scripts/docker.sh ensure_docker_test_user creates it`);
  return Number(r.stdout.trim());
}

/** `mcpcell ARGS` as the docker-group user, stdin empty: { code, stdout, stderr }. */
export function mcpcellAsDockerUser(args, timeout = 60_000) {
  const home = spawnSync('getent', ['passwd', DOCKER_USER], { encoding: 'utf8' }).stdout.split(':')[5];
  const r = spawnSync('runuser', ['-u', DOCKER_USER, '--', 'env', '-i', 'PATH=/usr/bin:/bin', 'LANG=C.UTF-8', `HOME=${home}`,
    MCPCELL_BIN, ...args], { encoding: 'utf8', timeout, input: '', cwd: '/' });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
