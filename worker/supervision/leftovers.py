"""What a finished trainer reported but could not deliver before it exited (the control plane was
away as it ended), sent by its worker: its last status would otherwise stay on this disk and the
run would stay `running` until it was marked lost. Only for a trainer that exited 0: of one that
failed or was stopped, the supervisor has said how it ended."""
import logging
from pathlib import Path

from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec

log = logging.getLogger(__name__)
TRAINER_LEFTOVERS_WAIT_S = 300.0  # the control plane away for longer: the run is marked lost


def deliver_trainer_leftovers(spec: LaunchSpec, report: ReportingSession,
                              timeout_s: float = TRAINER_LEFTOVERS_WAIT_S) -> None:
    if spec.ingest is None:
        return
    source = f"trainer:{spec.attempt}"
    client = IngestClient(spec.ingest.url, spec.ingest.token, source=source)
    leftovers = Reporter(client, Path(spec.output_dir) / "events", source=source)
    if leftovers.backlog:
        report.log(f"sending {leftovers.backlog} event(s) the trainer could not deliver")
        leftovers.start()
        if not leftovers.close(timeout_s):
            log.warning("run %s: %d trainer event(s) still undelivered", spec.run_id, leftovers.backlog)
    else:
        leftovers.outbox.close()
        client.close()
