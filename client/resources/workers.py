"""The live workers: their pools, devices and the runs they are busy with."""
from client.session import Json, Session


class WorkerCalls(Session):
    def workers(self) -> Json:
        """The fleet as the broker's inspection found it (a 503 ApiError when the broker is away)."""
        return self._call("GET", "workers/")
