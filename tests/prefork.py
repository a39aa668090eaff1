"""Python processes for the tests' servers and clients, forked from an interpreter that has already
imported the MCP SDK and pydantic.

Starting ``python -m mas.samples.mcp_server`` costs about 1.5 CPU-seconds before the server reads
its first line, almost all of it ``import mcp`` (building the SDK's pydantic models). The suite
starts such a process a few hundred times. Here one *zygote* per test process imports those
libraries once; every server or client then is a fork of it:

* the command a test runs is ``python -S prefork.py SOCKET ARGS...`` (the *launcher*, stdlib only,
  ~20 ms); it hands its own stdin, stdout and stderr to the zygote over a Unix socket
  (``SCM_RIGHTS``) with its argv, environment and folder, and the zygote forks a child that takes
  them as its fds 0-2 and runs ``ARGS`` (``-m module ...`` or ``script ...``) as ``__main__``;
* so the server is still a real process on the very pipes the runtime made: its stdin EOF, its
  stdout and stderr, its exit status (the launcher exits with the child's status, or dies of the
  child's signal), SIGTERM/SIGINT/SIGHUP (the launcher passes them on) and SIGKILL (the zygote
  kills the child when the launcher's end of the socket closes) behave as for ``python ARGS...``;
  the child runs one thread, as a fresh interpreter does;
* only libraries are pre-imported (:data:`LIBRARIES`), never ``mas`` or ``codegen``: the code under
  test is imported by the child, as by a fresh interpreter.

The launcher runs ``python ARGS...`` itself (``exec``) whenever the zygote cannot serve the same
interpreter: no zygote, another ``PYTHONPATH``, or any other ``PYTHON*`` setting (a hash seed, -X
options); the two that a running interpreter can take on, ``PYTHONUNBUFFERED`` and
``PYTHONDONTWRITEBYTECODE``, the child applies itself. ``TOOLGEN_TESTS_PREFORK=0`` turns the zygote
off for a whole run, to compare.

Imported as ``prefork`` (tests/conftest.py puts tests/ on sys.path); the launcher half imports
only the standard library, so it starts quickly under ``python -S``.
"""

from __future__ import annotations

import array
import functools
import json
import os
import signal
import socket
import sys
import threading

TYPE_CHECKING = False  # not typing's: the launcher imports as little as it can
if TYPE_CHECKING:
    import selectors
    import subprocess
    from collections.abc import Callable

#: What the zygote imports before it forks: the libraries that make a cold start slow.
LIBRARIES = (
    "pydantic",
    "mcp",
    "mcp.types",
    "mcp.client",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.server",
    "mcp.server.lowlevel",
    "mcp.server.mcpserver",
    "mcp.server.stdio",
    "mcp.server.streamable_http",
    "mcp.server.sse",
    "mcp.shared.exceptions",
    "jsonschema",
    "anyio",
    "httpx2",
    "starlette.applications",
    "sse_starlette",
    "uvicorn",
    "yaml",
    "jwt",
)
#: Signals the launcher passes on to the child (SIGKILL cannot be caught: the zygote sees the
#: launcher's end of the socket close and kills the child).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
#: One message: argv, environment and folder as JSON; environments here are a few KiB.
MESSAGE = 1 << 20
#: How long the zygote waits for the request of a launcher that has connected: a launcher sends it
#: at once, and every launcher behind a silent one waits (each gives up on the zygote after 10 s).
REQUEST_TIMEOUT = 3
LAUNCHER = os.path.abspath(__file__)
REPO = os.path.dirname(os.path.dirname(LAUNCHER))
#: PYTHON* settings a forked child applies itself (:meth:`_Job.run`); any other must match the zygote's.
APPLIED = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")
#: Their two options, which may come before ``-c``, ``-m`` or the script (pytest-xdist starts its
#: workers with ``-u``); with any other option the launcher runs a cold ``python``.
FLAGS = ("-u", "-B")


# --- the launcher (stdlib only) --------------------------------------------------------------------


def _same_interpreter(env: dict[str, str], zygote_env: dict[str, str]) -> bool:
    """Whether a fresh ``python`` under ``env`` would start as the zygote did: same PYTHON* settings."""

    def python_settings(e: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in e.items() if k.startswith("PYTHON") and k not in APPLIED}

    return python_settings(env) == python_settings(zygote_env)


def _options(args: list[str]) -> tuple[list[str], list[str]]:
    """The leading :data:`FLAGS` of ``python ARGS`` and what follows them."""
    count = 0
    while count < len(args) and args[count] in FLAGS:
        count += 1
    return args[:count], args[count:]


def _exec(args: list[str]) -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)  # a mask outlives exec
    os.execv(sys.executable, [sys.executable, *args])


def launch(sock_path: str, args: list[str]) -> None:
    """Run ``python ARGS`` as a fork of the zygote at ``sock_path`` (or exec it when it cannot)."""
    try:
        with open(sock_path + ".env", encoding="utf-8") as f:
            zygote_env = json.load(f)
    except (OSError, ValueError):
        _exec(args)
    if not _same_interpreter(dict(os.environ), zygote_env):
        _exec(args)
    rest = _options(args)[1]
    if not rest or (rest[0].startswith("-") and rest[0] not in ("-c", "-m")):  # another option: -W, -X, -I...
        _exec(args)
    # Held back from the request until the handlers below pass them on: the child may already run
    # (and be signalled) before the launcher has read its pid. Without this, a SIGTERM in that
    # window killed the launcher and never reached the child (seen at load 10).
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.settimeout(10)
        conn.connect(sock_path)
        payload = json.dumps({"argv": args, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
        conn.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
        reply = conn.recv(64)
    except OSError:
        conn.close()
        _exec(args)
    if not reply.startswith(b"P"):  # the zygote refused (it says why on its stderr): start cold
        conn.close()
        _exec(args)
    pid = int(reply[1:])
    for sig in FORWARDED:
        signal.signal(sig, lambda signum, _frame: os.kill(pid, signum))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    # The child holds the pipes now; the launcher lets go of its copies, so the child's exit is
    # the pipes' EOF, as for a direct child.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    conn.settimeout(None)  # the child's lifetime: the runtime's own shutdown bounds it
    status = conn.recv(64)
    code = os.waitstatus_to_exitcode(int(status[1:])) if status.startswith(b"S") else 1
    if code < 0:  # die of the child's signal (SIGKILL and SIGSTOP have no handler to reset)
        if -code in FORWARDED:
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


# --- the tests' side --------------------------------------------------------------------------


#: Set by :func:`share` in the pytest-xdist controller: the zygotes it started for its workers, as
#: JSON ``[[pythonpath or null, socket path, pid], ...]``; the workers inherit the environment.
SHARED = "TOOLGEN_TESTS_ZYGOTES"


def _spawn(pythonpath: str | None) -> tuple[str, subprocess.Popen[bytes]] | None:
    """Start a zygote of this test process for ``PYTHONPATH=pythonpath`` (None: unset), stopped
    when this process exits; its socket path and process, or None when zygotes are turned off."""
    import atexit
    import shutil
    import subprocess
    import tempfile

    if os.environ.get("TOOLGEN_TESTS_PREFORK") == "0":
        return None
    repo = str(REPO)
    folder = tempfile.mkdtemp(prefix="tz-")  # short: a Unix socket path has ~100 bytes
    sock_path = os.path.join(folder, "s")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != SHARED}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    with open(os.path.join(folder, "log"), "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, LAUNCHER, "--serve", sock_path],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
            env=env, cwd=repo, start_new_session=True,
        )  # fmt: skip

    def stop() -> None:
        assert proc.stdin is not None
        ended = proc.poll()  # before the EOF below, only a crash or a signal ends a zygote
        proc.stdin.close()  # the zygote exits on EOF
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if ended is not None:
            _report_early_end(pythonpath, ended, os.path.join(folder, "log"))
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    return sock_path, proc


def _report_early_end(pythonpath: str | None, status: int, log_path: str) -> None:
    """Say on stderr that a zygote ended before its test process, with the end of its log (which
    goes with its folder): the commands after it ran cold, slower but still passing, and a child
    it had forked lost its exit status."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            last = f.read().splitlines()[-20:]
    except OSError:
        last = []
    print(
        f"prefork: the zygote for PYTHONPATH={pythonpath} ended early (status {status}); later commands ran cold",
        *(f"prefork:   {line}" for line in last), sep="\n", file=sys.stderr,
    )  # fmt: skip


def _ready(sock_path: str, alive: Callable[[], bool]) -> str | None:
    """``sock_path`` once its zygote listens (at most 60 s); None if it died or took longer."""
    import time

    deadline = time.monotonic() + 60
    while not os.path.exists(sock_path + ".env"):
        if not alive() or time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return sock_path


def _start(pythonpath: str | None) -> str | None:
    """A zygote of this process's own for ``PYTHONPATH=pythonpath``: its socket path, or None when
    it cannot start (then every command here is a cold ``python``)."""
    started = _spawn(pythonpath)
    if started is None:
        return None
    sock_path, proc = started
    return _ready(sock_path, lambda: proc.poll() is None)


def share(pythonpaths: list[str | None]) -> None:
    """Start a zygote for each of ``pythonpaths`` now, without waiting, for the processes this one
    starts next (pytest-xdist's workers) to use instead of starting their own: each zygote costs
    about a CPU-second of imports, and the 4 workers had started 11 between them."""
    shared = []
    for pythonpath in dict.fromkeys(pythonpaths):
        started = _spawn(pythonpath)
        if started is not None:
            shared.append([pythonpath, started[0], started[1].pid])
    os.environ[SHARED] = json.dumps(shared)


def worker_python(pythonpath: str | None) -> str | None:
    """The ``python`` for pytest-xdist's ``--tx popen//python=...``: the launcher of the zygote
    :func:`share` started for ``pythonpath``, so each worker is a fork that has its libraries
    imported (a cold worker spent about 1.5 of its 3 CPU-seconds of start importing them). None
    when that zygote does not listen, or a path would not survive the spec's syntax."""
    import shlex

    sock_path = _shared(pythonpath)
    if sock_path is None:
        return None
    command = shlex.join([sys.executable, "-S", LAUNCHER, sock_path])
    return None if "//" in command or "=" in command else command


def _shared(pythonpath: str | None) -> str | None:
    """The socket of the zygote :func:`share` started for ``pythonpath``, once it listens; None
    when there is none (or it died)."""
    for path, sock_path, pid in json.loads(os.environ.get(SHARED) or "[]"):
        if path == pythonpath:
            return _ready(sock_path, functools.partial(_alive, pid))
    return None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs: a zygote that died stays a zombie until the controller
    reaps it, and ``kill(pid, 0)`` alone would call it alive."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


_zygotes: dict[str | None, str | None] = {}
_starting = threading.Lock()  # the conformance tests ask from several threads at once


def python_args(*args: str, pythonpath: str | None = str(REPO)) -> tuple[str, ...]:
    """What to give ``python`` so that it runs ``python *args`` as a fork of a zygote for
    ``PYTHONPATH=pythonpath`` (the tests' servers run with the checkout on it; None: unset, as for a
    client of the installed package): the one the xdist controller shares (:func:`share`), else
    this process's own. The command's environment must say the same."""
    with _starting:
        if pythonpath not in _zygotes:
            _zygotes[pythonpath] = _shared(pythonpath) or _start(pythonpath)
    sock_path = _zygotes[pythonpath]
    return ("-S", LAUNCHER, sock_path, *args) if sock_path else args


def python_command(*args: str, pythonpath: str | None = str(REPO)) -> list[str]:
    """``[sys.executable, ...]``: run ``python *args`` as a fork of this process's zygote."""
    return [sys.executable, *python_args(*args, pythonpath=pythonpath)]


# --- the zygote ----------------------------------------------------------------------------------


class _Job:
    """What a forked child runs: ``python ARGS`` under the launcher's environment and folder."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def run(self) -> None:
        import io
        import random
        import runpy

        random.seed()  # a fresh interpreter's state, not the zygote's
        flags, args = _options(self.argv)
        sys.dont_write_bytecode = "-B" in flags or bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        if "-u" in flags or os.environ.get("PYTHONUNBUFFERED"):  # as python -u: text straight to the fd
            for name, fd in (("stdout", 1), ("stderr", 2)):
                old = getattr(sys, name)
                new = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), old.encoding, old.errors, write_through=True)
                setattr(sys, name, new)
                setattr(sys, f"__{name}__", new)
        if args[:1] == ["-c"] and len(args) >= 2:
            sys.argv = ["-c", *args[2:]]
            sys.path[0] = ""
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        elif args[:1] == ["-m"] and len(args) >= 2:
            sys.argv = [args[1], *args[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(args[0])
            sys.argv = [args[0], *args[1:]]
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")


def _serve(sock_path: str) -> _Job:
    """Fork a child per launcher until the test process goes (EOF on stdin). Returns in a child only."""
    import importlib
    import selectors

    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(sock_path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    sel.register(0, selectors.EVENT_READ, "parent")
    # Written last and renamed into place: its presence says the zygote is listening.
    with open(sock_path + ".env.tmp", "w", encoding="utf-8") as f:
        json.dump(dict(os.environ), f)
    os.replace(sock_path + ".env.tmp", sock_path + ".env")
    while True:
        for key, _ in sel.select():
            if key.data == "parent":
                if not os.read(0, 4096):  # the test process is gone, and what it started goes too
                    for pid, child in children.items():
                        _kill(pid)
                        child.close()
                    os._exit(0)
            elif key.data == "child":
                os.read(wake_r, 4096)
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    done = children.pop(pid, None)
                    if done is not None:
                        if done in sel.get_map():  # not if its launcher died first
                            sel.unregister(done)
                        try:
                            done.send(b"S%d" % status)
                        except OSError:
                            pass
                        done.close()
            elif isinstance(key.data, int):  # a launcher's end closed (it never writes): it died
                gone = children.get(key.data)
                if gone is not None and not _receives(gone):
                    sel.unregister(gone)  # else its EOF would wake the loop again and again
                    _kill(key.data)
            else:
                job = _accept(listener, sel, children, (listener.fileno(), wake_r, wake_w))
                if job is not None:
                    return job


def _accept(
    listener: socket.socket, sel: selectors.BaseSelector, children: dict[int, socket.socket], own: tuple[int, ...]
) -> _Job | None:
    """Take one launcher's request and fork its child: the job in the child, None in the zygote.

    The child runs nothing until its pid has reached the launcher. A launcher can be gone by then
    (SIGKILLed by a test's timeout, or tired of waiting and started the command cold): the reply
    then fails, the child exits unrun, and the zygote serves on. Unguarded, that failed reply
    ended the zygote, and with it the exit status of every child it had forked (seen under load).
    """
    import selectors  # imported already (by _serve): the launcher half stays free of it

    conn, _ = listener.accept()
    conn.settimeout(REQUEST_TIMEOUT)  # a launcher sends at once; a silent one must not stall the others
    try:
        msg, ancdata, _flags, _addr = conn.recvmsg(MESSAGE, socket.CMSG_SPACE(3 * 4))
        fds = array.array("i")
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        request = json.loads(msg)
        if len(fds) != 3:
            raise ValueError(f"expected 3 fds, got {len(fds)}")
    except (OSError, ValueError) as exc:
        print(f"prefork: a launcher's request was unusable: {exc}", file=sys.stderr)
        conn.close()
        return None
    go_r, go_w = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:  # the launcher reads no reply and runs the command cold
        print(f"prefork: cannot fork: {exc}", file=sys.stderr)
        for fd in (*fds, go_r, go_w):
            os.close(fd)
        conn.close()
        return None
    if pid == 0:
        os.close(go_w)
        if not os.read(go_r, 1):  # the zygote could not tell the launcher: nobody waits for this child
            os._exit(1)
        os.close(go_r)
        sel.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in own:
            os.close(fd)
        for child in children.values():
            child.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # The zygote watches the launcher for the child: the child runs no thread of its
        # own, as a fresh interpreter (a second thread makes the generator refuse to fork).
        conn.close()
        return _Job(request["argv"])
    os.close(go_r)
    for fd in fds:
        os.close(fd)
    try:
        conn.send(b"P%d" % pid)
    except OSError:  # the launcher is gone: the child reads EOF, exits unrun, and is reaped as any
        os.close(go_w)
        conn.close()
        return None
    os.write(go_w, b"g")
    os.close(go_w)
    children[pid] = conn
    sel.register(conn, selectors.EVENT_READ, pid)
    return None


def _receives(conn: socket.socket) -> bool:
    """Whether a launcher's connection is still open (a launcher never writes after its request:
    a readable end is a closed one, its launcher dead)."""
    try:
        return bool(conn.recv(64, socket.MSG_DONTWAIT))
    except BlockingIOError:
        return True
    except OSError:
        return False


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _exit_as_python_would(job: _Job) -> None:
    """Run the job, then end as the interpreter would: exit status, non-daemon threads joined,
    atexit handlers run, stdout and stderr flushed. The module teardown that follows in a cold
    interpreter (about a second with the SDK loaded) is skipped: it frees memory, nothing else."""
    import atexit
    import threading
    import traceback

    code = 0
    try:
        job.run()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code < 0:  # as python does for an uncaught KeyboardInterrupt: die of the signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _exit_as_python_would(_serve(sys.argv[2]))
    else:
        launch(sys.argv[1], sys.argv[2:])
