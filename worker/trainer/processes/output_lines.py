"""The trainer process's output as log lines a person can read: level and source, bars as their last state.

The trainer logs in LOG_FORMAT, so a line it logged carries its level and the logger's name,
which become the log line's level and source. Other output (a library's print, a traceback)
is `info` from `trainer output`, except Python's warnings and tracebacks, which are what a
person looks for. A progress bar redraws itself with carriage returns: only its last state is kept.
"""
import re

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_LOGGED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([^\s:]+): (.*)$",
                     re.DOTALL)
_LEVELS = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "ERROR": "error", "CRITICAL": "error"}
_WARNING = re.compile(r"\b\w*Warning:|^WARNING\b")
_ERROR = re.compile(r"^Traceback \(most recent call last\)|^\w+(Error|Exception): ")
UNPARSED_SOURCE = "trainer output"


def last_redraw(line: str) -> str:
    """What a line redrawn with carriage returns (a progress bar) shows last."""
    redraws = [part for part in line.split("\r") if part.strip()]
    return redraws[-1] if redraws else ""


def log_parts(line: str) -> tuple[str, str, str]:
    """(level, source, message) of one line of the trainer's output."""
    if logged := _LOGGED.match(line):
        level, source, message = logged.groups()
        return _LEVELS[level], source, message
    if _ERROR.search(line):
        return "error", UNPARSED_SOURCE, line
    if _WARNING.search(line):
        return "warning", UNPARSED_SOURCE, line
    return "info", UNPARSED_SOURCE, line
