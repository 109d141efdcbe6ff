"""The watch over a started run, until it ends: vLLM's server(s) first (a trainer that fails
because vLLM died is not the news), the trainer's end, the trainer's further machines, and a
cancel the trainer did not obey within the worker's grace. Heartbeats, and the cancel they bring
back, are the reporting session's; the watch only reads the cancel."""
import threading
import time

from worker.supervision.endings import CANCELLED_LATE, TRAINER_FINISHED, Ending, how_trainer_ended
from worker.supervision.servers import RunServers
from worker.supervision.trainer_launch import RunTrainer

WATCH_INTERVAL_S = 0.5
PEER_FAILURE_WAIT_S = 30.0  # a machine lost under the trainer: Ray's health check names it within this


class RunWatch:
    def __init__(self, trainer: RunTrainer, servers: RunServers, cancel_requested: threading.Event,
                 cancel_grace_s: float):
        self.trainer, self.servers = trainer, servers
        self.cancel_requested, self.cancel_grace_s = cancel_requested, cancel_grace_s

    def until_ended(self) -> Ending:
        cancel_seen_at = None
        while True:
            if server_failure := self.servers.failure():
                return Ending.failed(*server_failure)
            code = self.trainer.exit_code()
            if code is not None:
                return self.trainer_ended(code)
            # A further machine's ranks killed, or the machine lost; ranks failing as a peer died
            # are the news only once this machine's trainer ends (trainer_ended).
            if failure := self.trainer.further_failure():
                return Ending.failed(failure)
            if self.cancel_requested.is_set():
                cancel_seen_at = cancel_seen_at or time.monotonic()
                if time.monotonic() - cancel_seen_at > self.cancel_grace_s:
                    return CANCELLED_LATE
            time.sleep(WATCH_INTERVAL_S)

    def trainer_ended(self, code: int) -> Ending:
        if code == 0:
            return TRAINER_FINISHED  # the trainer reported succeeded or cancelled itself
        # Repeating a failure the trainer already reported changes nothing; this one covers
        # a trainer that could not report (killed, crashed before its reporter started).
        last_lines = self.trainer.last_lines()
        if (self.trainer.spans_machines or self.servers.elsewhere) and \
                (failure := self._other_machine_failure_within(PEER_FAILURE_WAIT_S)):
            return Ending.failed(*failure)  # the cause; this machine's ranks only lost their peers or server
        return Ending.failed(how_trainer_ended(code, last_lines), last_lines)

    def _other_machine_failure_within(self, wait_s: float) -> tuple[str, list[str]] | None:
        """A further machine's failure and its last lines, waited for a while: this machine's ranks
        fail at their next collective as soon as a peer dies, and at their next rollout or sync
        when vLLM's machine does, before Ray has marked a lost machine dead."""
        deadline = time.monotonic() + wait_s
        while True:
            if failure := self.servers.elsewhere_failure():
                return failure
            if peer := self.trainer.further_failure():
                return peer, self.trainer.last_lines()
            if time.monotonic() >= deadline:
                return None
            time.sleep(1.0)
