"""Nothing user code starts outlives its sandbox. Standard library only (child side).

The process the parent starts, the keeper, forks the process that runs user code (the worker)
and never runs user code itself. It ends the worker, and with it everything the worker started,
when the parent sends SIGTERM (process.py's kill), when its own parent is gone, or when the
worker ends on its own:
- in a PID namespace the keeper's child is the namespace's init, which forks the worker and
  reaps orphans (a zombie still counts against the process limit); when init dies the kernel
  kills every process in the namespace, sessions of their own or not;
- without one the keeper is a child subreaper: what user code leaves behind (a double-forked,
  setsid'd grandchild too) becomes the keeper's child, and the keeper kills them all. Where
  Landlock cannot scope signals (ABI < 6) user code could kill the keeper first and escape.
"""
import ctypes
import os
import signal

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_WATCHED = {signal.SIGCHLD, signal.SIGTERM}


def start_worker(keep_fds: tuple[int, ...], pid_namespace: bool) -> None:
    """Returns only in the worker. Only it keeps the protocol's pipes (`keep_fds`): when it dies
    the parent reads end-of-file at once."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)  # taken with sigtimedwait, never by a handler
    if not pid_namespace:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    keeper = os.getpid()
    child = os.fork()
    if child:
        _let_go(keep_fds)
        status = _keep(child, parent)
        if not pid_namespace:
            _end_descendants()
        _exit_like(status)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the keeper gone, even SIGKILLed: we go too
    if pid_namespace:
        _be_init(keep_fds)  # and as init, everything in the namespace with us
    elif os.getppid() != keeper:
        os._exit(1)  # it went before we asked


def _be_init(keep_fds: tuple[int, ...]) -> None:
    """pid 1 of the namespace: forks the worker (which returns), reaps every orphan, and exits
    when the worker does."""
    worker = os.fork()
    if not worker:
        return
    _let_go(keep_fds)
    while True:
        pid, status = os.wait()
        if pid == worker:
            break
    # init ignores a signal it sends itself: an exit code above 128 says which one killed the worker.
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status))


def _keep(child: int, parent: int) -> int:
    """`child`'s wait status, reaping other orphans meanwhile; SIGTERM or our parent gone kill it."""
    while True:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == child:
                return status
            if not pid:
                break
        told = signal.sigtimedwait(_WATCHED, 1.0)
        if os.getppid() != parent or (told and told.si_signo == signal.SIGTERM):
            os.kill(child, signal.SIGKILL)  # not reaped yet, so the pid is still this child's


def _end_descendants() -> None:
    """Kills our children until none is left: the orphans of each one killed become ours next."""
    me = str(os.getpid())
    while True:
        for pid in _children_of(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _children_of(ppid: str) -> list[int]:
    children = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[1] == ppid:
                        children.append(int(entry.name))
            except (OSError, IndexError):
                continue  # gone meanwhile
    return children


def _let_go(fds: tuple[int, ...]) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(devnull, fd)
    os.close(devnull)


def _exit_like(status: int) -> None:
    """Ends this process as its child ended, a signal as that signal: the parent tells the user how."""
    code = os.waitstatus_to_exitcode(status)
    killed_by = -code if code < 0 else code - 128 if code > 128 else None
    if killed_by in signal.valid_signals():
        signal.signal(killed_by, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {killed_by})
        os.kill(os.getpid(), killed_by)
    os._exit(code if code >= 0 else 1)
