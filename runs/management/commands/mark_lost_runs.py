from django.core.management.base import BaseCommand

from runs.telemetry.liveness import mark_lost_runs


class Command(BaseCommand):
    help = "Mark starting/running runs whose heartbeat is older than RUN_HEARTBEAT_TIMEOUT_S as lost."

    def handle(self, *args, **options):
        lost = mark_lost_runs()
        self.stdout.write(f"marked {len(lost)} run(s) lost" + (f": {', '.join(map(str, lost))}" if lost else ""))
