"""tests/prefork.py: a forked server or client behaves as ``python ARGS`` would, on the same pipes.

The suite's servers and command-line runs start from a pre-imported zygote; these tests hold the
promises the other tests rely on: stdio, exit status, stdin EOF, signals passed on, a SIGKILLed
launcher taking its child along, and the code under test imported fresh in every child.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import REPO
from prefork import LAUNCHER, MESSAGE, REQUEST_TIMEOUT, SHARED, _start, python_args, python_command

ENV = {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")}


def _run(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(python_command("-c", code), capture_output=True, text=True, timeout=30, env=ENV, **kwargs)  # type: ignore[call-overload]


def test_a_child_has_the_libraries_but_imports_the_code_under_test_itself() -> None:
    done = _run("import sys; print('mcp' in sys.modules, 'mas' in sys.modules, sys.argv)")
    assert (done.returncode, done.stdout, done.stderr) == (0, "True False ['-c']\n", "")


def test_a_child_runs_one_thread_as_a_fresh_interpreter() -> None:
    """The zygote watches the launcher for the child: a second thread in the child made the
    generator's ``_can_fork`` refuse its model worker in every forked command line."""
    done = _run("import threading; print(threading.active_count())")
    assert (done.returncode, done.stdout, done.stderr) == (0, "1\n", "")


def test_the_options_a_child_applies_and_any_other_runs_cold() -> None:
    """``-u`` and ``-B`` (pytest-xdist starts its workers with ``-u``) are the child's to apply; with
    another option the launcher runs a cold ``python``, which alone can honour it."""
    code = "import sys; print(sys.stdout.write_through, sys.dont_write_bytecode, sys.warnoptions, sys.argv)"
    for args, expected in (
        (("-u", "-B"), "True True [] ['-c', 'x']\n"),
        ((), "False False [] ['-c', 'x']\n"),
        (("-W", "error::UserWarning"), "False False ['error::UserWarning'] ['-c', 'x']\n"),
    ):
        command = python_command(*args, "-c", code, "x")
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=ENV)
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, ""), args


def test_an_xdist_worker_is_a_fork_of_the_zygote_its_controller_shared() -> None:
    """Under pytest-xdist (tests/conftest.py) the workers start from the zygote too: a cold one
    spent about half of its start importing the libraries the zygote has."""
    if "PYTEST_XDIST_WORKER" not in os.environ or os.environ.get("TOOLGEN_TESTS_PREFORK") == "0":
        pytest.skip("not a pytest-xdist worker, or zygotes are turned off")
    if SHARED not in os.environ:  # tests/conftest.py shares zygotes for -n N only
        pytest.skip("the workers were started from --tx specs alone, as given")
    shared = {path: pid for path, _, pid in json.loads(os.environ[SHARED])}
    assert os.getppid() == shared[os.environ.get("PYTHONPATH")]


def test_stdout_stderr_stdin_and_the_exit_status_are_the_childs() -> None:
    code = "import sys; print(sys.stdin.read().upper()); print('to err', file=sys.stderr); sys.exit(3)"
    done = _run(code, input="from stdin")
    assert (done.returncode, done.stdout, done.stderr) == (3, "FROM STDIN\n", "to err\n")
    failed = _run("raise ValueError('boom')")
    assert failed.returncode == 1 and failed.stderr.rstrip().endswith("ValueError: boom")


def _started(code: str, sock_path: str | None = None) -> tuple[subprocess.Popen[str], int]:
    """A launcher whose child printed its pid and waits; the pid is the child's, not the launcher's.
    The zygote is this process's usual one, or the one listening at ``sock_path``."""
    own = [sys.executable, "-S", LAUNCHER, sock_path, "-c", code] if sock_path is not None else None
    command = own or python_command("-c", code)
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    assert child != proc.pid
    return proc, child


def test_sigterm_to_the_launcher_reaches_the_child() -> None:
    code = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n"
        "print(os.getpid(), flush=True)\n"
        "time.sleep(30)\n"
    )
    proc, _ = _started(code)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 7


def test_a_child_killed_by_a_signal_kills_its_launcher_alike() -> None:
    proc, child = _started("import os, time; print(os.getpid(), flush=True); time.sleep(30)")
    os.kill(child, signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL


def test_a_sigkilled_launcher_takes_its_child_along() -> None:
    # stdin stays open, so only the launcher's death can end the child.
    proc, child = _started("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()")
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 10
    while _alive(child):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the child outlived its SIGKILLed launcher")
        time.sleep(0.05)
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:  # until the zygote reaps it
        time.sleep(0.05)
    # The zygote that killed and reaped it serves the next command: a fork again (_started checks).
    again, _ = _started("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()")
    assert again.stdin is not None
    again.stdin.close()
    assert again.wait(10) == 0


def test_a_launcher_gone_before_its_reply_gets_no_child_and_the_zygote_serves_on(tmp_path: Path) -> None:
    """A launcher SIGKILLed (or out of patience) between its request and the zygote's reply: the
    reply fails, the child it would have had runs nothing, and the next command is still a fork.
    The zygote used to die of that failed reply, under load, with every child it had forked."""
    args = python_args("-c", "pass")
    if args[0] != "-S":
        pytest.skip("no zygote in this run (TOOLGEN_TESTS_PREFORK=0)")
    ran = tmp_path / "ran"
    request = {"argv": ["-c", f"open({str(ran)!r}, 'w').close()"], "env": ENV, "cwd": str(tmp_path)}
    payload = json.dumps(request).encode()
    assert len(payload) < MESSAGE
    null = os.open(os.devnull, os.O_RDWR)
    # The zygote takes connections in order: while it waits on the silent first one, the second
    # sends its request and closes, so that launcher is surely gone before any reply to it.
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as silent:
        silent.settimeout(10)
        silent.connect(args[2])
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.settimeout(10)
            conn.connect(args[2])
            conn.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 3))])
    os.close(null)
    again, _ = _started("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()")
    assert again.stdin is not None
    again.stdin.close()
    assert again.wait(10) == 0
    time.sleep(0.5)  # the zygote took the request before the one above: a child would have run by now
    assert not ran.exists(), "the request of a launcher that was gone ran anyway"


@pytest.mark.full  # a zygote of its own, and 3 s of waiting
def test_a_launcher_silent_past_the_request_timeout_holds_up_the_next_one_no_longer() -> None:
    """A connection that never sends its request is dropped after REQUEST_TIMEOUT: the launcher
    queued behind it is served then, a fork, and not left to give up and start cold (10 s). A zygote
    of the test's own: the shared one would hold up the other workers' commands meanwhile."""
    sock_path = _start(str(REPO))
    if sock_path is None:
        pytest.skip("no zygote in this run (TOOLGEN_TESTS_PREFORK=0)")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as silent:
        silent.settimeout(10)
        silent.connect(sock_path)
        started = time.monotonic()
        proc, _ = _started("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()", sock_path)  # a fork
        waited = time.monotonic() - started
        assert silent.recv(64) == b""  # the zygote dropped it, without a reply
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(10) == 0
    # Served once the silent one was dropped: at the limit, not before it (nor at the launcher's 10 s).
    assert REQUEST_TIMEOUT - 0.5 < waited < REQUEST_TIMEOUT + 5, waited


_ENDING = """
import os, signal, prefork
sock_path, proc = prefork._spawn(None)
os.kill(proc.pid, signal.SIGKILL)  # as a crash would end it, long before this process ends
proc.wait(10)
"""


def test_a_zygote_that_ends_before_its_test_process_is_reported_at_exit() -> None:
    """Its commands run cold after that and still pass, so only the report shows it (and the log's
    end, which goes with the zygote's folder)."""
    env = {"PYTHONPATH": str(REPO / "tests"), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-c", _ENDING], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0
    said = f"prefork: the zygote for PYTHONPATH=None ended early (status {-signal.SIGKILL})"
    assert done.stderr.startswith(said), done.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie waits for the zygote to reap it: it has ended.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


#: Run as the controller: share a zygote, then start a "worker" that runs one command through
#: python_command (with PYTHONPATH unset, as the zygote's key None says) and prints the socket it
#: was given and the command's parent pid.
_SHARING = """
import json, os, subprocess, sys
import prefork
prefork.share([None])
(_, shared, pid), = json.loads(os.environ[prefork.SHARED])
worker = (
    "import os, prefork, subprocess\\n"
    "args = prefork.python_command('-c', 'import os; print(os.getppid())', pythonpath=None)\\n"
    "env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}\\n"
    "print(args[3]); print(subprocess.run(args, capture_output=True, text=True, env=env, timeout=30).stdout)"
)
done = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True, timeout=60)
print(json.dumps({"shared": shared, "pid": pid, "out": done.stdout.split(), "err": done.stderr}))
"""


def test_a_worker_uses_the_zygote_its_controller_shared() -> None:
    """The controller of an xdist run starts the zygotes (``share``) and a process it starts after
    uses them instead of starting its own: the command goes to the shared socket, and the child is
    a fork of the shared zygote (its parent)."""
    env = {"PYTHONPATH": str(REPO / "tests"), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-c", _SHARING], capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["out"] == [report["shared"], str(report["pid"])], report
