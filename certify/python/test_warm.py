"""Tests of warm.py: a warm launch behaves as `python -m MODULE ARGS` started cold.

    python3 -m unittest discover -s certify/python -p 'test_warm.py' -v

Standard library only; each test runs `warm.py run` with a shell COMMAND that makes launches,
and reads what the launches wrote.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

WARM = Path(__file__).resolve().parent / "warm.py"

# A preloaded library with module state, and modules launched with -m.
LIBRARY = """
counter = 0
"""
COUNT = """
import sys, lib
lib.counter += 1
print("counter", lib.counter, "argv", sys.argv[1:], flush=True)
"""
WHERE = """
import os, sys
print("cwd", os.getcwd())
print("env", os.environ.get("WARM_TEST_VALUE"))
print("path0", sys.path[0])
print("name", __name__)
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("WARM_TEST_EXIT", "0")))
"""
TERM = """
import os, signal, sys, time
got = []
signal.signal(signal.SIGTERM, lambda signum, frame: got.append("SIGTERM"))
signal.signal(signal.SIGHUP, lambda signum, frame: got.append("SIGHUP"))
with open("ready", "w") as f:  # a FIFO the test reads
    f.write(str(os.getpid()))
while "SIGTERM" not in got:
    time.sleep(0.05)
print("got", *got)
sys.exit(7)
"""
HANG = """
import os, time
with open("ready", "w") as f:  # a FIFO the test reads
    f.write(str(os.getpid()))
while True:
    time.sleep(0.05)
"""
CRASH = """
raise RuntimeError("boom")
"""
THREADS = """
import threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
"""


class WarmTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="warm-test-"))
        self.lib = self.dir / "lib"
        self.lib.mkdir()
        for name, text in {"lib": LIBRARY, "count_mod": COUNT, "where_mod": WHERE,
                           "term_mod": TERM, "hang_mod": HANG, "crash_mod": CRASH,
                           "threads_mod": THREADS}.items():
            (self.lib / f"{name}.py").write_text(textwrap.dedent(text))
        self.work = self.dir / "work"
        self.work.mkdir()

    def tearDown(self) -> None:
        subprocess.run(["rm", "-rf", str(self.dir)], check=False)

    def warm(self, script: str, preload: str = "lib") -> subprocess.CompletedProcess:
        """`warm.py run --preload PRELOAD -- sh -c SCRIPT`, in the work folder; `$LAUNCH` in
        SCRIPT is `python warm.py launch`."""
        env = dict(os.environ, PYTHONPATH=str(self.lib),
                   LAUNCH=f"{sys.executable} {WARM} launch")
        return subprocess.run(
            [sys.executable, str(WARM), "run", "--preload", preload, "--", "sh", "-c", script],
            cwd=self.work, env=env, capture_output=True, text=True, timeout=30)

    def warm_python(self, body: str) -> subprocess.CompletedProcess:
        """`warm.py run` with a Python COMMAND: BODY, after `start(module)` (a launcher) and
        `ready()` (the pid the launch writes to the FIFO `ready`)."""
        script = textwrap.dedent("""
            import os, select, signal, subprocess, sys
            os.mkfifo("ready")
            def start(module):
                return subprocess.Popen([sys.executable, sys.argv[1], "launch", "-m", module])
            def ready():
                with open("ready") as f:
                    return int(f.read())
        """) + textwrap.dedent(body)
        (self.work / "command.py").write_text(script)
        env = dict(os.environ, PYTHONPATH=str(self.lib))
        return subprocess.run(
            [sys.executable, str(WARM), "run", "--preload", "lib", "--", sys.executable,
             "command.py", str(WARM)],
            cwd=self.work, env=env, capture_output=True, text=True, timeout=30)

    def test_each_launch_is_a_fresh_process_with_its_own_arguments(self) -> None:
        r = self.warm("$LAUNCH -m count_mod a && $LAUNCH -m count_mod b c")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(),
                         ["counter 1 argv ['a']", "counter 1 argv ['b', 'c']"])

    def test_a_launch_takes_the_launchers_cwd_environment_streams_and_exit_code(self) -> None:
        (self.work / "sub").mkdir()
        r = self.warm("cd sub && WARM_TEST_VALUE=seen WARM_TEST_EXIT=5 $LAUNCH -m where_mod "
                      ">out 2>err; echo status $?")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "status 5")
        sub = self.work / "sub"
        out = (sub / "out").read_text().splitlines()
        self.assertEqual(out, [f"cwd {sub}", "env seen", f"path0 {sub}", "name __main__"])
        self.assertEqual((sub / "err").read_text(), "to stderr\n")

    def test_an_uncaught_exception_exits_1_with_its_traceback(self) -> None:
        r = self.warm("$LAUNCH -m crash_mod; echo status $?")
        self.assertEqual(r.stdout.strip(), "status 1")
        self.assertIn("RuntimeError: boom", r.stderr)

    def test_signals_to_the_launcher_reach_the_launch(self) -> None:
        # The launch notes what it got and exits 7 on SIGTERM.
        r = self.warm("mkfifo ready; $LAUNCH -m term_mod & l=$!; read p < ready; "
                      "kill -HUP $l; kill -TERM $l; wait $l; echo status $?")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["got SIGHUP SIGTERM", "status 7"], r.stderr)

    def test_a_launch_killed_by_a_signal_ends_its_launcher_by_that_signal(self) -> None:
        r = self.warm_python("""
            launcher = start("hang_mod")
            os.kill(ready(), signal.SIGTERM)
            print("status", launcher.wait(timeout=10))
        """)
        self.assertEqual(r.stdout.strip(), f"status {-signal.SIGTERM}", r.stderr)

    def test_a_launcher_killed_outright_takes_its_launch_with_it(self) -> None:
        # Checked while the run goes on: at its end the server kills every launch anyway.
        r = self.warm_python("""
            launcher = start("hang_mod")
            fd = os.pidfd_open(ready())
            launcher.kill()
            launcher.wait()
            readable, _, _ = select.select([fd], [], [], 10)
            print("ended" if readable else "still running")
        """)
        self.assertEqual(r.stdout.strip(), "ended", r.stderr)

    def test_a_launch_dies_with_a_server_killed_outright(self) -> None:
        r = self.warm_python("""
            launcher = start("hang_mod")
            pid = ready()
            fd = os.pidfd_open(pid)
            os.kill(os.getppid(), signal.SIGKILL)  # the warm server
            readable, _, _ = select.select([fd], [], [], 10)
            print("ended" if readable else "still running")
        """)
        self.assertEqual(r.stdout.strip(), "ended", r.stderr)

    def test_the_run_exits_with_its_commands_status(self) -> None:
        self.assertEqual(self.warm("exit 4").returncode, 4)

    def test_without_a_warm_server_launch_starts_cold(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(self.lib))
        env.pop("PALLAS_WARM_SOCKET", None)
        r = subprocess.run([sys.executable, str(WARM), "launch", "-m", "count_mod", "x"],
                           cwd=self.work, env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.stdout.strip(), "counter 1 argv ['x']")

    def test_a_preload_that_starts_a_thread_is_refused(self) -> None:
        r = self.warm("true", preload="threads_mod")
        self.assertEqual(r.returncode, 3)
        self.assertIn("started threads", r.stderr)

    def test_a_preload_that_fails_names_the_module(self) -> None:
        r = self.warm("true", preload="no_such_module_here")
        self.assertEqual(r.returncode, 3)
        self.assertIn("--preload no_such_module_here", r.stderr)


if __name__ == "__main__":
    unittest.main()
