from worker.trainer.distributed.launch_failure import first_failure, listed_failures

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


def summary(*failures: tuple[int, int, str]) -> list[str]:
    """torchrun's summary of (rank, exit code, time) failures, its root cause last."""
    def entry(number, rank, code, at):
        return [f"[{number}]:", f"  time      : 2026-11-27_02:{at}", "  host      : localhost",
                f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : {code} (pid: 1{rank})"]
    *others, root = failures
    lines = ["worker.trainer FAILED", "-" * 60, "Failures:"]
    for number, failure in enumerate(others, start=1):
        lines += entry(number, *failure)
    return lines + ["-" * 60, "Root Cause (first observed failure):", *entry(0, *root), "=" * 60]


def test_a_rank_killed_by_a_signal_is_named_over_a_peer_torchrun_saw_fail_first():
    # The peer failed at its next collective within the same second and recorded its exception's
    # time, which torchrun took for the root cause.
    lines = summary((1, -9, "14:05"), (0, 1, "14:05"))
    assert [(f.rank, f.exit_code) for f in listed_failures(lines)] == [(1, -9), (0, 1)]
    assert first_failure(lines).describe() == "the trainer's rank 1 was killed by SIGKILL (signal 9)"


def test_the_ranks_torchrun_stopped_itself_are_not_named():
    # SIGTERM to the ranks left, then SIGKILL to one still running 30 s later.
    lines = summary((1, -15, "14:06"), (2, -9, "14:36"), (0, 1, "14:05"))
    assert first_failure(lines).describe() == "the trainer's rank 0 exited with code 1"


def test_output_without_torchruns_summary_names_no_rank():
    assert first_failure(["Traceback (most recent call last):", "ValueError: bad"]) is None
