#!/usr/bin/env python3
"""Runs a command as a job in a real terminal, the way a client started from a
shell runs mcpcell, and reports what happened to that terminal.

    pty_run.py --stdin tty|pipe|null --stdout tty|pipe --stderr tty|pipe
               [--typed TEXT] -- CMD [ARGS...]

A fresh pseudo-terminal becomes the controlling terminal of a new session
(a stand-in for the user's shell); CMD runs there in a foreground process
group of its own, beside a sentinel `sleep` in the same group (the caller's
group, as a cell would see it). "@PGID@" in CMD is replaced by that group's
id. TEXT is typed on the terminal before CMD starts (what the user types
while the server runs). Prints one JSON object: CMD's exit, the sentinel's
fate, the terminal's echo flag and foreground group before and after, what
was still unread on the terminal, and everything written to it or to the
pipes. Bounded: CMD is killed after 120 s.
"""
import argparse
import fcntl
import json
import os
import select
import signal
import sys
import termios
import time

GUARD_S = 120


def parse():
    p = argparse.ArgumentParser()
    for fd in ('stdin', 'stdout', 'stderr'):
        p.add_argument('--' + fd, choices=['tty', 'pipe', 'null'], default='pipe')
    p.add_argument('--typed', default='')
    p.add_argument('--eof', action='store_true', help='then type Ctrl-D at the start of a line')
    p.add_argument('cmd', nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.cmd and a.cmd[0] == '--':
        a.cmd = a.cmd[1:]
    return a


def echo_on(slave):
    return bool(termios.tcgetattr(slave)[3] & termios.ECHO)


def run_job(a, slave, pipes, report_w):
    """The session leader (the 'shell'): starts the job and its sentinel, waits, reports."""
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    go_r, go_w = os.pipe()
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.read(go_r, 1)  # the shell made us the foreground first
        for n, mode in enumerate((a.stdin, a.stdout, a.stderr)):
            if mode == 'tty':
                os.dup2(slave, n)
            elif mode == 'null':
                os.dup2(os.open('/dev/null', os.O_RDWR), n)
            else:
                os.dup2(pipes[n], n)
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        pgid = str(os.getpid())
        os.execvp(a.cmd[0], [x.replace('@PGID@', pgid) for x in a.cmd])
    os.setpgid(job, job)
    sentinel = os.fork()
    if sentinel == 0:
        os.setpgid(0, job)  # the caller's group, as the cell sees it
        os.execvp('sleep', ['sleep', '600'])
    os.tcsetpgrp(slave, job)
    os.write(go_w, b'g')
    deadline = time.monotonic() + GUARD_S
    status = None
    while status is None:
        pid, st = os.waitpid(job, os.WNOHANG)
        if pid == job:
            status = st
        elif time.monotonic() > deadline:
            os.kill(job, signal.SIGKILL)
        else:
            time.sleep(0.05)
    exit_info = ({'code': os.WEXITSTATUS(status), 'signal': None} if os.WIFEXITED(status)
                 else {'code': None, 'signal': os.WTERMSIG(status)})
    fg_after = os.tcgetpgrp(slave)
    pid, st = os.waitpid(sentinel, os.WNOHANG)
    sentinel_fate = None if pid == 0 else (
        f'signal {os.WTERMSIG(st)}' if os.WIFSIGNALED(st) else f'exit {os.WEXITSTATUS(st)}')
    if pid == 0:
        os.kill(sentinel, signal.SIGKILL)
        os.waitpid(sentinel, 0)
    os.write(report_w, (json.dumps({'exit': exit_info, 'job_pgid': job, 'fg_after': fg_after,
                                    'sentinel_alive': sentinel_fate is None,
                                    'sentinel_fate': sentinel_fate}) + '\n').encode())
    os._exit(0)


def main():
    a = parse()
    master, slave = os.openpty()
    attrs_before = termios.tcgetattr(slave)
    echo_before = echo_on(slave)
    pipe_ends = {}  # n -> (ours, theirs)
    for n, mode in enumerate((a.stdin, a.stdout, a.stderr)):
        if mode == 'pipe':
            r, w = os.pipe()
            pipe_ends[n] = (w, r) if n == 0 else (r, w)
    report_r, report_w = os.pipe()
    shell = os.fork()
    if shell == 0:
        os.close(master)
        os.close(report_r)
        for ours, _ in pipe_ends.values():
            os.close(ours)
        run_job(a, slave, {n: theirs for n, (_, theirs) in pipe_ends.items()}, report_w)
    os.close(report_w)
    for n, (_, theirs) in pipe_ends.items():
        os.close(theirs)
    if a.typed:
        os.write(master, a.typed.encode() + b'\n')
    if a.eof:
        os.write(master, b'\x04')
    out = {'tty': b'', 1: b'', 2: b''}
    readers = {master: 'tty', report_r: 'report'}
    for n in (1, 2):
        if n in pipe_ends:
            readers[pipe_ends[n][0]] = n
    report = b''
    deadline = time.monotonic() + GUARD_S + 10
    while report_r in readers and time.monotonic() < deadline:
        ready, _, _ = select.select(list(readers), [], [], 1.0)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b''
            if not data:
                del readers[fd]
            elif readers[fd] == 'report':
                report += data
            else:
                out[readers[fd]] += data
    os.waitpid(shell, 0)
    lines = [json.loads(x) for x in report.decode().splitlines() if x.strip()]
    result = {}
    for x in lines:
        result.update(x)
    # Drain what the job's processes still had in flight.
    for fd, key in list(readers.items()):
        if key == 'report':
            continue
        while select.select([fd], [], [], 0.2)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out[key] += data
    # Whatever is still queued on the terminal was typed and never read.
    flags = fcntl.fcntl(slave, fcntl.F_GETFL)
    fcntl.fcntl(slave, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        left = os.read(slave, 65536)
    except OSError:
        left = b''
    result.update({
        'echo_before': echo_before,
        'echo_after': echo_on(slave),
        'attrs_unchanged': termios.tcgetattr(slave) == attrs_before,
        'typed_left': left.decode('latin1'),
        'tty_output': out['tty'].decode('latin1'),
        'stdout': out[1].decode('latin1'),
        'stderr': out[2].decode('latin1'),
    })
    print(json.dumps(result))


if __name__ == '__main__':
    main()
