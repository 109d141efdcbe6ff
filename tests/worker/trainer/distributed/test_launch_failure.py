from worker.trainer.distributed.launch_failure import first_failure

TORCHRUN_SUMMARY = """\
worker.trainer FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-25_20:14:05
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 11545)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 11545
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-25_20:14:04
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 11546)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 11546
============================================================""".splitlines()


def test_the_rank_that_died_first_is_named_with_how():
    failure = first_failure(TORCHRUN_SUMMARY)
    assert (failure.rank, failure.exit_code) == (1, -9)
    assert failure.describe() == "the trainer's rank 1 was killed by SIGKILL (signal 9)"


def test_a_rank_that_exited_names_its_code():
    lines = [line.replace("-9 (pid", "1 (pid") for line in TORCHRUN_SUMMARY]
    assert first_failure(lines).describe() == "the trainer's rank 1 exited with code 1"


def test_output_without_torchruns_summary_names_no_rank():
    assert first_failure(["Traceback (most recent call last):", "ValueError: bad"]) is None
