"""Fresh Python processes that start warm: each launch is forked from an interpreter that has
already imported a bridge's libraries, and then runs as `python -m MODULE ARGS` would.

    python warm.py run [--preload MOD[,MOD...]] [--preload-file FILE] -- COMMAND [ARGS...]
    python warm.py launch -m MODULE [ARGS...]

`run` imports the listed modules once (FILE: one a line, `#` comments; libraries only, never the
bridge's own code: a module that reads its configuration when imported would read the server's,
not the launch's), listens on a Unix socket in a private directory and runs COMMAND with
PALLAS_WARM_SOCKET naming it. It exits with COMMAND's status, after ending every launch still
running.

`launch`, run by a deployment's command while PALLAS_WARM_SOCKET is set, asks that server for a
process: forked from the warm interpreter, it takes the launcher's working directory,
environment, sys.path as `python -m` builds it from PYTHONPATH, standard streams (passed as file
descriptors) and argv, and its own process group. Every signal the launcher receives (the
harness's SIGTERM to stop, SIGHUP to reload) is sent to that group; when the process ends, the
launcher ends the same way (exit code, or the same signal). When the launcher dies (SIGKILL),
the server kills the process's group. Without PALLAS_WARM_SOCKET, `launch` execs
`python -m MODULE ARGS`: the cold start.

The result is a fresh process per launch (no state carried from one to the next) whose import
work was done once. The server refuses to fork when importing started a thread.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading

SOCKET_ENV = "PALLAS_WARM_SOCKET"
RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
           signal.SIGUSR2)
HEADER = struct.Struct("!I")
PR_SET_PDEATHSIG = 1  # linux/prctl.h
USAGE_RUN = "warm.py run [--preload MOD,...] [--preload-file FILE] -- COMMAND [ARGS...]"
USAGE_LAUNCH = "warm.py launch -m MODULE [ARGS...]"


class WarmError(Exception):
    """A failure of the warm server or launcher, printed as one line."""


# ----- the launcher (a deployment's command) -----------------------------------------------

def launch(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "-m":
        raise WarmError(f"usage: {USAGE_LAUNCH}")
    path = os.environ.get(SOCKET_ENV)
    if not path:
        os.execv(sys.executable, [sys.executable, *argv])
    # Signals are relayed from the start: one that arrives before the process is forked waits
    # for it.
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    pending: list[int] = []
    started = False

    def relay(signum: int, _frame: object) -> None:
        if not started:
            pending.append(signum)
            return
        try:
            conn.sendall(json.dumps({"kill": signum}).encode() + b"\n")
        except OSError:
            pass

    for s in RELAYED:
        signal.signal(s, relay)
    try:
        conn.connect(path)
    except OSError as e:
        raise WarmError(f"no warm server at {path} ({SOCKET_ENV}): {e}") from e
    request = json.dumps({"module": argv[1], "args": argv[2:], "cwd": os.getcwd(),
                          "env": dict(os.environ)}).encode()
    message = HEADER.pack(len(request)) + request
    sent = socket.send_fds(conn, [message], [0, 1, 2])
    conn.sendall(message[sent:])
    replies = conn.makefile("rb")
    first = replies.readline()
    if not first:
        raise WarmError("the warm server closed the connection before starting the launch")
    reply = json.loads(first)
    if "error" in reply:
        raise WarmError(reply["error"])
    started = True
    for signum in pending:
        relay(signum, None)
    line = replies.readline()
    if not line:
        raise WarmError("the warm server ended while the launch ran")
    ended = json.loads(line)
    if "signal" in ended:
        signum = int(ended["signal"])
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    return int(ended["exit"])


# ----- the server ---------------------------------------------------------------------------

class Launch:
    """One forked process and the connection of the launcher that asked for it."""

    def __init__(self, pid: int, conn: socket.socket):
        self.pid = pid
        self.conn: socket.socket | None = conn  # None once closed


class Server:
    def __init__(self, command: list[str]):
        self.dir = tempfile.mkdtemp(prefix="pallas-warm-")
        self.path = os.path.join(self.dir, "warm.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "signal")
        self.launches: dict[int, Launch] = {}
        self.command = command
        self.process: subprocess.Popen | None = None  # kept: its __del__ must not reap it
        self.command_pid = 0
        self.command_status: int | None = None
        self.terminating = False
        self.pid = os.getpid()
        # The interpreter's path without this script's folder and PYTHONPATH's entries: what a
        # launch's `python -m` would have after its own cwd and PYTHONPATH.
        own = set(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
        here = os.path.dirname(os.path.abspath(__file__))
        self.base_path = [p for p in sys.path[1:] if p not in own and p != here]

    def start_command(self) -> None:
        env = dict(os.environ, **{SOCKET_ENV: self.path})
        signal.set_wakeup_fd(self.wake_w)
        for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, self.on_signal)
        self.process = subprocess.Popen(self.command, env=env)
        self.command_pid = self.process.pid

    def on_signal(self, signum: int, _frame: object) -> None:
        # SIGINT from the terminal reaches the command too, which decides; SIGTERM and SIGHUP
        # end the run.
        if signum in (signal.SIGTERM, signal.SIGHUP):
            self.terminating = True

    def serve(self) -> dict | None:
        """Runs until the command ends (returns None) or, in a forked child, returns the
        launch request that child is to run."""
        while self.command_status is None:
            if self.terminating:
                self.end_command()
            for key, _ in self.sel.select():
                if key.data == "accept":
                    child = self.accept()
                    if child is not None:
                        return child
                elif key.data == "signal":
                    self.drain_wakeups()
                else:
                    self.from_launcher(key.data)
        return None

    def drain_wakeups(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass
        self.reap()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.command_pid:
                self.command_status = os.waitstatus_to_exitcode(status)
                continue
            launch = self.launches.pop(pid, None)
            if launch is None:
                continue
            kill_group(pid, signal.SIGKILL)  # what the process left in its group
            code = os.waitstatus_to_exitcode(status)
            reply = {"signal": -code} if code < 0 else {"exit": code}
            if launch.conn is not None:
                send_line(launch.conn, reply)
            self.drop(launch)

    def accept(self) -> dict | None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return None
        try:
            request, fds = receive_request(conn)
        except (OSError, ValueError, WarmError) as e:
            send_line(conn, {"error": f"bad launch request: {e}"})
            conn.close()
            return None
        if threading.active_count() > 1:
            send_line(conn, {"error": "the warm server runs threads: refusing to fork"})
            for fd in fds:
                os.close(fd)
            conn.close()
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.become_launch(conn, fds)
            return request
        for fd in fds:
            os.close(fd)
        launch = Launch(pid, conn)
        self.launches[pid] = launch
        self.sel.register(conn, selectors.EVENT_READ, launch)
        send_line(conn, {"pid": pid})
        return None

    def become_launch(self, conn: socket.socket, fds: list[int]) -> None:
        """In the forked child: drop the server's state, take the launcher's streams."""
        os.setpgid(0, 0)
        # Killed with the server, should it die outright: no launch outlives the run.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != self.pid:
            os._exit(1)  # the server died before the line above
        signal.set_wakeup_fd(-1)
        for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.sel.close()
        self.listener.close()
        for launch in self.launches.values():
            if launch.conn is not None:
                launch.conn.close()
        conn.close()
        os.close(self.wake_r)
        os.close(self.wake_w)
        for target, fd in enumerate(fds):
            if fd != target:
                os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)

    def from_launcher(self, launch: Launch) -> None:
        if launch.conn is None:
            return
        try:
            data = launch.conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            # The launcher died without waiting for its process: end the process.
            kill_group(launch.pid, signal.SIGKILL)
            self.drop(launch)
            return
        for line in data.splitlines():
            try:
                signum = int(json.loads(line)["kill"])
            except (ValueError, KeyError, TypeError):
                continue
            kill_group(launch.pid, signum)

    def drop(self, launch: Launch) -> None:
        if launch.conn is not None:
            self.sel.unregister(launch.conn)
            launch.conn.close()
            launch.conn = None

    def end_command(self) -> None:
        if self.command_pid and self.command_status is None:
            try:
                os.kill(self.command_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.terminating = False

    def close(self) -> None:
        for pid in list(self.launches):
            kill_group(pid, signal.SIGKILL)
        self.sel.close()
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def kill_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def send_line(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass


def receive_request(conn: socket.socket) -> tuple[dict, list[int]]:
    conn.settimeout(10)
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise WarmError(f"expected 3 file descriptors, got {len(fds)}")
    while len(data) < HEADER.size:
        more = conn.recv(1 << 16)
        if not more:
            raise WarmError("truncated request")
        data += more
    (size,) = HEADER.unpack_from(data)
    while len(data) < HEADER.size + size:
        more = conn.recv(1 << 16)
        if not more:
            raise WarmError("truncated request")
        data += more
    request = json.loads(data[HEADER.size:HEADER.size + size])
    return request, fds


def run_launch(request: dict, base_path: list[str]) -> None:
    """In the forked child: become `python -m MODULE ARGS` in the launcher's place."""
    import importlib
    import runpy

    cwd = request["cwd"]
    env = request["env"]
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [cwd, *extra, *base_path]
    importlib.invalidate_caches()
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    stdin = io.BufferedReader(io.FileIO(0, "r", closefd=False))
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(stdin)
    sys.stdout = sys.__stdout__ = stream(1, unbuffered, "strict")
    sys.stderr = sys.__stderr__ = stream(2, True, "backslashreplace")
    sys.argv = [request["module"], *request["args"]]
    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)


def stream(fd: int, write_through: bool, errors: str) -> io.TextIOWrapper:
    """A standard output stream as the interpreter makes it at startup."""
    return io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
                            encoding="utf-8", errors=errors, line_buffering=os.isatty(fd),
                            write_through=write_through)


def preload_file(path: str) -> list[str]:
    """Module names, one a line; `#` starts a comment."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise WarmError(f"--preload-file {path}: {e}") from e
    return [n for n in (line.split("#", 1)[0].strip() for line in lines) if n]


def run(argv: list[str]) -> int:
    if "--" not in argv:
        raise WarmError(f"usage: {USAGE_RUN}")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        raise WarmError("no COMMAND after --")
    modules: list[str] = []
    while options:
        if options[0] == "--preload" and len(options) > 1:
            modules += [m for m in options[1].split(",") if m]
            options = options[2:]
        elif options[0] == "--preload-file" and len(options) > 1:
            modules += preload_file(options[1])
            options = options[2:]
        else:
            raise WarmError(f"unknown option {options[0]}")
    import importlib

    for m in modules:
        try:
            importlib.import_module(m)
        except Exception as e:  # noqa: BLE001 (any import failure is the user's to read)
            raise WarmError(f"--preload {m}: {type(e).__name__}: {e}") from e
    if threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate())
        raise WarmError(f"importing {','.join(modules)} started threads ({names}); a process "
                        "with threads cannot be forked safely")
    server = Server(command)
    try:
        server.start_command()
        request = server.serve()
    except BaseException:
        server.close()
        raise
    if request is not None:
        run_launch(request, server.base_path)
        return 0
    server.close()
    status = server.command_status or 0
    return 128 - status if status < 0 else status


def main() -> None:
    args = sys.argv[1:]
    try:
        if args[:1] == ["run"]:
            sys.exit(run(args[1:]))
        if args[:1] == ["launch"]:
            sys.exit(launch(args[1:]))
        raise WarmError(f"usage: {USAGE_RUN} | {USAGE_LAUNCH}")
    except WarmError as e:
        print(f"warm.py: {e}", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
