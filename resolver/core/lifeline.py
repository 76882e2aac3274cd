"""Every process the project starts ends within seconds of its parent, however the parent died.

The rule and its reasons: docs/architecture.md, *Child processes end with their parent*.
Standard library only (the demo and the venv bootstrap use it before the venv exists).

* A forked child that keeps running Python (evaluate.py's pool workers) calls
  `die_with_parent()` first thing (the pool's initializer).
* A child that is exec'd (the simulator, the scripts the demo runs, pip) is started with
  `subprocess.Popen(args, **child_options(env=...))`; a Python child of ours also calls
  `watch_parent_from_env()` (run_main does), which covers what the first step cannot.

On Linux the kernel sends SIGTERM to the child when its parent dies (PR_SET_PDEATHSIG).
That signal follows the *thread* that forked, not the process, so it is only asked for
when the main thread forks (its end is the process's end); a child forked from any
other thread, and every child on other systems, polls instead: a daemon thread checks
every POLL_SECONDS whether the parent is still there and sends itself SIGTERM when it is
not (then exits outright after GRACE_SECONDS, should a handler not end it). After
asking, the child checks that its parent is still the one that forked it: a parent that
died between the fork and the request would otherwise never be noticed.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Callable, Literal

__all__ = ["ENV_PARENT", "child_options", "die_with_parent", "watch_parent_from_env"]

ENV_PARENT = "REASONSCAPE_PARENT_PID"   # set for an exec'd child: the pid of the process it must not outlive
DEATH_SIGNAL = signal.SIGTERM           # lets the runner write what it has (its SIGTERM handler)
POLL_SECONDS = 0.5
GRACE_SECONDS = 5.0
_PR_SET_PDEATHSIG, _PR_GET_PDEATHSIG = 1, 2

# (parent pid, forked from the main thread) as the parent saw it just before the fork
# that made this process; None when this process was not forked by hooked Python code.
_fork_origin: tuple | None = None
_prctl_function: Callable[..., int] | Literal[False] | None = None   # libc's prctl once resolved, False where there is none


def _before_fork() -> None:
    global _fork_origin
    _prctl()                        # resolved in the parent: the child should not dlopen
    _fork_origin = (os.getpid(), threading.current_thread() is threading.main_thread())


def _after_fork_in_parent() -> None:
    global _fork_origin
    _fork_origin = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent)


def _prctl() -> Callable[..., int] | None:
    """libc's prctl on Linux, or None."""
    global _prctl_function
    if _prctl_function is None:
        _prctl_function = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _prctl_function = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                pass
    return _prctl_function or None


def _set_death_signal() -> bool:
    """Ask the kernel for DEATH_SIGNAL when the forking thread ends; True when it was granted."""
    prctl = _prctl()
    if not prctl:
        return False
    import ctypes  # loaded already: _prctl() found prctl through it

    ulong = ctypes.c_ulong
    return prctl(ctypes.c_int(_PR_SET_PDEATHSIG), ulong(int(DEATH_SIGNAL)), ulong(0), ulong(0), ulong(0)) == 0


def _death_signal_set() -> bool:
    """Whether this process already has a parent-death signal (set before its exec)."""
    prctl = _prctl()
    if not prctl:
        return False
    import ctypes  # loaded already: _prctl() found prctl through it

    value, ulong = ctypes.c_int(0), ctypes.c_ulong
    return prctl(ctypes.c_int(_PR_GET_PDEATHSIG), ctypes.byref(value), ulong(0), ulong(0), ulong(0)) == 0 \
        and value.value != 0


def _end_now() -> None:
    os.kill(os.getpid(), DEATH_SIGNAL)
    os._exit(128 + int(DEATH_SIGNAL))       # a handler caught it: the parent is gone all the same


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch(parent: int) -> None:
    """Start the polling thread: SIGTERM to this process once `parent` is no longer there."""
    if os.name == "nt":         # os.kill(pid, 0) would terminate the process there; no fallback on Windows
        return
    direct = os.getppid() == parent

    def gone() -> bool:
        # a reparented child sees another ppid; one started through a wrapper watches the pid itself
        return os.getppid() != parent if direct else not _alive(parent)

    def run() -> None:
        while not gone():
            time.sleep(POLL_SECONDS)
        os.kill(os.getpid(), DEATH_SIGNAL)
        time.sleep(GRACE_SECONDS)
        os._exit(128 + int(DEATH_SIGNAL))

    threading.Thread(target=run, name="parent-watch", daemon=True).start()


def die_with_parent() -> None:
    """In a forked child that keeps running Python: end when the parent process ends."""
    origin = _fork_origin
    parent, from_main = origin if origin is not None else (os.getppid(), False)
    granted = from_main and _set_death_signal()
    if os.getppid() != parent:      # the parent died before the request above could cover it
        _end_now()
    if not granted:
        _watch(parent)


def child_options(env: dict | None = None, preexec: Callable[[], object] | None = None) -> dict:
    """Keyword arguments for subprocess.Popen/run so the child ends with this process.

    ``env``: the child's environment (default: this one), given ENV_PARENT. ``preexec``:
    the caller's own preexec_fn, run first; the parent check after it covers its delay.
    """
    parent = os.getpid()
    child_env = dict(os.environ if env is None else env)
    child_env[ENV_PARENT] = str(parent)

    def in_child() -> None:
        if preexec is not None:
            preexec()
        origin = _fork_origin
        if origin is not None and origin[1]:
            _set_death_signal()
        if os.getppid() != parent:
            _end_now()

    return {"env": child_env, "preexec_fn": in_child if os.name != "nt" else preexec}


def watch_parent_from_env() -> None:
    """In an exec'd Python child: end with the parent named by ENV_PARENT unless the kernel already will.

    The variable is removed so this process's own children are not tied to their grandparent.
    """
    value = os.environ.pop(ENV_PARENT, "")
    if not value.isdigit():
        return
    parent = int(value)
    if _death_signal_set():
        return
    if os.name != "nt" and os.getppid() != parent and not _alive(parent):
        _end_now()
    _watch(parent)
