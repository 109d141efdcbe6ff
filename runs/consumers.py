"""The live channel of one run: `/ws/runs/<id>/`, for users who may see that run."""
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from runs.events import run_group
from runs.live_messages import HelloMessage, PongMessage
from runs.models import Run

NOT_FOUND = 4404  # same answer for "not yours" and "does not exist"


class RunConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        run = await self._visible_run()
        if run is None:
            await self.close(code=NOT_FOUND)
            return
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        await self.accept()
        # Tells the client where things stand now, so it knows what to fetch.
        await self._say(HelloMessage.of(run))

    async def disconnect(self, code):
        if hasattr(self, "run_id"):
            await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)

    async def receive_json(self, content, **kwargs):
        # The channel only speaks; ping lets a client check that the socket is alive.
        if content.get("type") == "ping":
            await self._say(PongMessage())

    @database_sync_to_async
    def _visible_run(self):
        return Run.objects.visible_to(self.scope.get("user")).filter(pk=self.run_id).first()

    async def _say(self, message: HelloMessage | PongMessage):
        await self.send(text_data=message.model_dump_json())

    async def _forward(self, message):
        await self.send(text_data=message["text"])  # already JSON: see runs.events.publish

    run_status = run_metrics = run_samples = run_log = run_checkpoint = run_evaluation = run_alarm = _forward
