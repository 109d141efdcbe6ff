from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Training runs"

    def ready(self):
        # Open run sockets re-check their access when a run or a user changes.
        from runs.live.access_watch import connect_receivers
        connect_receivers()
