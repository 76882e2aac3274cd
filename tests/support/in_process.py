"""Run a top-level script's `main` inside the test process, as its own process would.

Most tests that run a script check what it writes and prints, not that it is a process;
a Python start-up with the command's imports costs about a CPU-second each, and the suite
ran some 450 of them (docs/performance.md, *The test suite*). `run_in_process` gives back
what `subprocess.run(..., capture_output=True, text=True)` would: the exit code, stdout and
stderr (universal newlines), with the script's own `run_main` handling errors (one line and
exit 2, exit 130 on Ctrl-C) and an uncaught exception printed as Python prints it, exit 1.

What a process would have to itself is set for the call and put back after it: the working
folder, the environment, sys.argv, the standard streams, signal handlers, logging, warning
filters, sys.path and import hooks, and asyncio's event-loop policy. The tests about the process itself (signals, child
processes, start-up imports, no traceback from a real interpreter) keep real subprocesses:
`run_script(..., subprocess=True)` and the files that call subprocess directly.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import os
import runpy
import signal
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

# The scripts whose `main` runs in-process; the web apps' scripts serve until stopped and stay
# real processes, but for the starts they refuse (`run_refused_start`, below).
IN_PROCESS_SCRIPTS = frozenset({"analyze.py", "cohort.py", "data.py", "evaluate.py", "probe.py", "runner.py"})
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)


class _Output(io.TextIOWrapper):
    """A captured standard stream: text and `.buffer` both land in one byte buffer, as a pipe's do."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict")

    def captured(self) -> str:
        self.flush()
        text = self.buffer.getvalue().decode("utf-8")      # type: ignore[attr-defined]
        return text.replace("\r\n", "\n").replace("\r", "\n")   # subprocess's text mode does the same


@contextlib.contextmanager
def _bars_as_in(env: dict[str, str]):
    """tqdm reads TQDM_* once, when imported: it is imported here with this process's own
    environment (so a call's cannot stick), and a call whose environment sets TQDM_DISABLE (any
    non-empty value, as tqdm reads it) gets its bars off by default, as its own process would."""
    import tqdm.auto  # noqa: F401  (imports tqdm.std, whose class reads the environment)
    import tqdm.std

    cls = tqdm.std.tqdm
    original = cls.__dict__["__init__"]
    if not env.get("TQDM_DISABLE") or os.environ.get("TQDM_DISABLE"):
        yield
        return

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("disable", True)
        original.__get__(self, cls)(*args, **kwargs)

    cls.__init__ = __init__
    try:
        yield
    finally:
        cls.__init__ = original


def drop_new_import_hooks(before: list) -> None:
    """Remove the import hooks the project's own code added to sys.meta_path while a command ran
    (evaluate.py's, which keeps pandas out of its process) and keep every other: a library
    imported meanwhile may have added its own (six adds the one that serves ``six.moves``, and
    dateutil, under pandas, needs it)."""
    sys.meta_path[:] = [hook for hook in sys.meta_path
                        if hook in before or not type(hook).__module__.startswith("resolver.")]


@contextlib.contextmanager
def _process_state(script_path: Path, args: list[str], cwd: Path, env: dict[str, str]):
    with _bars_as_in(env), _the_rest(script_path, args, cwd, env) as streams:
        yield streams


@contextlib.contextmanager
def _the_rest(script_path: Path, args: list[str], cwd: Path, env: dict[str, str]):
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr)
    saved_paths = (list(sys.path), list(sys.meta_path))
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    root = logging.getLogger()
    saved_logging = (list(root.handlers), root.level)
    saved_policy = asyncio.get_event_loop_policy()
    out, err = _Output(), _Output()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = [str(script_path), *args]
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
    # What is alive before the command stays out of the collection after it (gc.freeze): that
    # collection is for what the command made, and a worker that has imported the web stack and
    # the rest holds ~400,000 objects, a quarter of a CPU second per full collection.
    gc.freeze()
    try:
        with warnings.catch_warnings():
            yield out, err
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
        sys.path[:] = saved_paths[0]
        drop_new_import_hooks(saved_paths[1])
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            if handler is not None:
                signal.signal(sig, handler)
        root.handlers[:] = saved_logging[0]
        root.setLevel(saved_logging[1])
        asyncio.set_event_loop_policy(saved_policy)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
        try:
            gc.collect()   # DuckDB connections a command dropped without closing release their files
        finally:
            gc.unfreeze()


def run_in_process(script_path: Path, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`script_path`'s `main(args)` through the script's own `run_main`, without its fast exit."""
    with _process_state(script_path, args, cwd, env) as (out, err):
        try:
            namespace = runpy.run_path(str(script_path), run_name="__in_process__")
            namespace["run_main"](namespace["main"], list(args))
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except Exception:                           # as the interpreter does with an uncaught exception
            traceback.print_exc()
            code = 1
        stdout, stderr = out.captured(), err.captured()
    return subprocess.CompletedProcess([sys.executable, str(script_path), *args], code, stdout, stderr)


# The web apps' scripts serve until stopped, so they run in-process only to check a start they
# refuse (a bad flag, a dataset they cannot serve): `run_refused_start`.
WEB_APP_SCRIPTS = frozenset({"explorer.py", "leaderboard.py", "spiderweb.py"})


@contextlib.contextmanager
def _serving_refused():
    """`resolver.web.serve` raises for the call: a web app that does not refuse its input ends as
    an uncaught error (exit 1, its traceback on stderr) instead of serving until stopped. Set in
    the package's own namespace, where `from resolver.web import serve` finds it before the
    lazy loader (resolver/web/__init__.py), and put back after."""
    import resolver.web as web

    def refuse(*args, **kwargs):
        raise AssertionError("the web app got as far as serving: it was expected to refuse its input")

    namespace = vars(web)
    had, saved = "serve" in namespace, namespace.get("serve")
    namespace["serve"] = refuse
    try:
        yield
    finally:
        if had:
            namespace["serve"] = saved
        else:
            namespace.pop("serve", None)


def run_refused_start(script: str, *args) -> subprocess.CompletedProcess:
    """A web app's script (leaderboard.py, explorer.py, spiderweb.py) run in this process as
    `run_in_process` runs the commands, from the repository root, for a start it must refuse:
    what `subprocess.run(..., capture_output=True, text=True)` of the script would give back."""
    if script not in WEB_APP_SCRIPTS:
        raise ValueError(f"{script} is not a web app's script: {sorted(WEB_APP_SCRIPTS)}")
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(repo))
    env.setdefault("TQDM_DISABLE", "1")
    with _serving_refused():
        return run_in_process(repo / script, [str(a) for a in args], repo, env)
