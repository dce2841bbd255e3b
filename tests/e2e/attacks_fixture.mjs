// The host side of the attack battery (tests/attacks/hostile_server.cc): the
// things a hostile server in a cell would love to reach, planted on the host,
// plus a record of every contact that reaches them. Every planted file is
// world-readable on purpose, so that file permissions are never what stops an
// attempt: only the cell can.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { MCPCELL_BIN, REPO_DIR } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, writeReadableFile } from './lib/tmp.mjs';

/**
 * The hostile server binary: $ATTACK_BIN, else next to the mcpcell under test
 * (build/ holds both; a staged copy should too), else <repo>/build/hostile_server.
 */
export const ATTACK_BIN = path.resolve(process.env.ATTACK_BIN ??
  [path.join(path.dirname(MCPCELL_BIN), 'hostile_server'), path.join(REPO_DIR, 'build', 'hostile_server')]
    .find((p) => existsSync(p)) ?? path.join(REPO_DIR, 'build', 'hostile_server'));

export function assertAttackBinExists() {
  if (!existsSync(ATTACK_BIN)) {
    throw new Error(`${ATTACK_BIN} is missing: build it (cmake --build build --target hostile_server) or set ATTACK_BIN`);
  }
}

/** Every attempt the battery must report, in its order (a rename or a drop fails the suite). */
export const ATTEMPTS = Object.freeze([
  'read_host_ssh_key', 'read_etc_shadow', 'read_parent_environ', 'env_leak', 'read_host_file',
  'escape_via_proc_root', 'leaked_fd', 'write_outside_mounts', 'write_readonly_bind', 'write_server_dir',
  'tcp_connect_host', 'udp_send_host', 'ipv6_connect', 'dns_lookup', 'abstract_unix_socket',
  'unix_socket_in_read_dir', 'docker_socket', 'raw_socket', 'netlink_audit', 'see_host_processes',
  'signal_host_process', 'ptrace_attach', 'process_vm_readv', 'mount_tmpfs', 'unshare_user_ns',
  'unshare_mount_ns', 'clone3_namespace', 'setns_host', 'chroot_escape', 'setuid_binary',
  'capabilities_present', 'hostname_change', 'clock_settime', 'reboot', 'kernel_module',
  'open_by_handle_at', 'mknod_device', 'keyctl_read', 'bpf_prog_load', 'io_uring_setup', 'userfaultfd',
  'perf_event_open', 'ioctl_tiocsti', 'i386_syscall', 'read_kernel_memory', 'kallsyms_addresses',
  'sysrq_trigger', 'core_pattern_write', 'cgroup_escape', 'cgroup_release_agent', 'fork_bomb',
  'memory_bomb', 'fill_tmp', 'fd_exhaustion',
]);

function listen(server, ...args) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...args, () => resolve(server));
  });
}

/** A stream server that hands every client the secret and records the contact. */
function bannerServer(secret, contacts, label) {
  return net.createServer((sock) => {
    contacts.push(`${label} from ${sock.remoteAddress ?? 'unix'}`);
    sock.on('error', () => {});
    sock.end(secret);
  });
}

function hostIPv4() {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '';
}

/**
 * Plants secrets, opens listeners and starts a sacrificial host process.
 * Returns { secret, readDir, args (for run_attacks), contacts (what reached
 * the host), sleeper: {pid, alive(), exit}, env (for mcpcell), close() }.
 */
export async function startHostFixture() {
  const secret = `MCPCELL-ATTACK-SECRET-${randomBytes(12).toString('hex')}`;
  const hostDir = makeTempDir('attack-host');
  const secretPath = path.join(hostDir, 'secret.txt');
  writeReadableFile(secretPath, `${secret}\n`);
  const home = path.join(hostDir, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  chmodSync(home, 0o755);
  chmodSync(path.join(home, '.ssh'), 0o755);
  writeReadableFile(path.join(home, '.ssh', 'id_ed25519'),
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${secret}\n-----END OPENSSH PRIVATE KEY-----\n`);

  // The --read dir: a file to try to modify and a unix socket to try to reach.
  // Dir and file are writable by anyone, so that only the read-only bind can
  // refuse a write (not the mode: as root the cell's uid is not the owner).
  const readDir = makeWritableDir('attack-read');
  const readme = path.join(readDir, 'readme.txt');
  writeReadableFile(readme, 'granted read-only\n');
  chmodSync(readme, 0o666);

  const contacts = [];
  const servers = [];
  const tcp = await listen(bannerServer(secret, contacts, 'tcp4'), 0, '0.0.0.0');
  servers.push(tcp);
  let tcp6Port = '';
  try {
    const tcp6 = await listen(bannerServer(secret, contacts, 'tcp6'), 0, '::1');
    servers.push(tcp6);
    tcp6Port = String(tcp6.address().port);
  } catch {
    // no IPv6 on this host: the attempt reports "no tcp6_port given"
  }
  const abstractName = `e2e-attack-${randomBytes(6).toString('hex')}`;
  servers.push(await listen(bannerServer(secret, contacts, 'abstract'), `\0${abstractName}`));
  const sockPath = path.join(readDir, 'agent.sock');
  servers.push(await listen(bannerServer(secret, contacts, 'unix(read dir)'), sockPath));
  chmodSync(sockPath, 0o777); // only the cell may stand in the way, not the mode

  const udp = dgram.createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    contacts.push(`udp from ${rinfo.address}:${rinfo.port}`);
    udp.send(secret, rinfo.port, rinfo.address);
  });
  await new Promise((resolve) => udp.bind(0, '0.0.0.0', resolve));

  // A host process the cell must neither see nor signal; its environment holds
  // the secret (read_parent_environ looks for it through /proc).
  const child = spawn('/bin/sleep', ['3600'], { env: { MCPCELL_TEST_SECRET: secret }, stdio: 'ignore' });
  let exitInfo = null;
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    exitInfo = { code, signal };
    resolve(exitInfo);
  }));
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });

  return {
    secret,
    readDir,
    contacts,
    env: { HOME: home, MCPCELL_TEST_SECRET: secret },
    sleeper: { pid: child.pid, exited, exitInfo: () => exitInfo },
    args: {
      secret,
      host_secret_path: secretPath,
      host_dir: readDir,
      host_home: home,
      host_pid: String(child.pid),
      host_addr: hostIPv4(),
      abstract_socket: abstractName,
      tcp_port: String(tcp.address().port),
      tcp6_port: tcp6Port,
      udp_port: String(udp.address().port),
    },
    close() {
      for (const s of servers) s.close();
      udp.close();
      if (exitInfo === null) child.kill('SIGKILL');
    },
  };
}

/** Parses run_attacks' text into a Map name → {escaped, detail}. */
export function parseBattery(result) {
  const text = (result.content ?? []).map((c) => c.text ?? '').join('');
  if (result.isError) throw new Error(`run_attacks failed: ${text}`);
  return new Map(JSON.parse(text).map((r) => [r.name, r]));
}
