"""What `grpo` exits with, so that a script can tell a refusal from a typo from a failed run."""
OK = 0
REFUSED = 1  # the API refused the request, or the work it took on failed; the reason is on stderr
USAGE = 2  # a command, flag or local file that cannot be used (argparse's code too); nothing was sent
RUN_NOT_SUCCEEDED = 3  # `runs watch`: the run ended failed, cancelled or lost
UNREACHABLE = 4  # the server could not be reached (or the connection broke); nothing may have been done
INTERRUPTED = 130  # Ctrl-C

SUMMARY = (f"Exit codes: {OK} done; {REFUSED} the API refused, or the work it took on failed (the reason on "
           f"stderr); {USAGE} a usage error (a flag, a local file); {RUN_NOT_SUCCEEDED} `runs watch`: the run "
           f"ended not succeeded; {UNREACHABLE} the server could not be reached; {INTERRUPTED} interrupted.")
