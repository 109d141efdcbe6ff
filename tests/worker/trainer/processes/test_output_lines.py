"""The trainer's output read as log lines: level and source from what it logged, warnings and
tracebacks found, a progress bar kept as its last state."""
import logging

import pytest

from worker.trainer.processes.output_lines import LOG_FORMAT, UNPARSED_SOURCE, last_redraw, log_parts


def formatted(level: int, name: str, message: str) -> str:
    record = logging.LogRecord(name, level, __file__, 1, message, None, None)
    return logging.Formatter(LOG_FORMAT).format(record)


@pytest.mark.parametrize(("level", "expected"), [(logging.INFO, "info"), (logging.WARNING, "warning"),
                                                 (logging.ERROR, "error"), (logging.CRITICAL, "error")])
def test_a_logged_line_keeps_its_level_and_its_logger_as_source(level, expected):
    line = formatted(level, "worker.trainer.loop", "step 3: loss 0.12")
    assert log_parts(line) == (expected, "worker.trainer.loop", "step 3: loss 0.12")


@pytest.mark.parametrize(("line", "level"), [
    ("/x/y.py:12: UserWarning: TypedStorage is deprecated", "warning"),
    ("Traceback (most recent call last):", "error"),
    ("RuntimeError: CUDA out of memory", "error"),
    ("loading shards", "info"),
])
def test_other_output_is_found_by_what_it_says(line, level):
    assert log_parts(line) == (level, UNPARSED_SOURCE, line)


def test_a_progress_bar_is_kept_as_its_last_state():
    bar = "\rLoading weights:   0%|  | 0/272\rLoading weights:  50%|# | 136/272\rLoading weights: 100%|##| 272/272\r"
    assert last_redraw(bar) == "Loading weights: 100%|##| 272/272"
    assert last_redraw("plain line") == "plain line"
    assert last_redraw("\r\r") == ""
