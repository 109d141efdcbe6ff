"""The live channel of one run: `/ws/runs/<id>/`, for users who may see that run, while they may.

Access is checked when the socket connects and again before a message is forwarded, at most
every LIVE_ACCESS_RECHECK_S (runs/live/access.py), and at once when the run or the user changes
or the session logs out (runs/live/access_watch.py). A socket whose user lost the run closes with
ACCESS_LOST, which the run page shows instead of reconnecting.
"""
import time
from typing import cast

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from runs.live.access import Listener, may_still_listen, session_digest
from runs.live.events import run_group, user_group
from runs.live.messages import HelloMessage, PongMessage
from runs.training_runs.models import Run

NOT_FOUND = 4404  # same answer for "not yours" and "does not exist"
ACCESS_LOST = 4403  # the user could see the run when the socket opened, and no longer can


class RunConsumer(AsyncJsonWebsocketConsumer):
    groups_joined: tuple[str, ...] = ()
    access_lost = False

    async def connect(self):
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        run = await self._visible_run()
        if run is None:
            await self.close(code=NOT_FOUND)
            return
        session = self.scope.get("session")
        session_key = session.session_key if session is not None else None
        user = self.scope["user"]
        assert user is not None  # the run is visible: the scope has a signed-in user
        self.listener = Listener(user_id=user.pk, session_key=session_key, run_id=self.run_id)
        self.session = session_digest(session_key)
        self.checked_at = time.monotonic()
        self.groups_joined = (run_group(self.run_id), user_group(self.listener.user_id))
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        # Tells the client where things stand now, so it knows what to fetch.
        await self._say(HelloMessage.of(run))

    async def disconnect(self, code):
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        # The channel only speaks; ping lets a client check that the socket is alive.
        if content.get("type") == "ping" and await self._may_still_listen():
            await self._say(PongMessage())

    @database_sync_to_async
    def _visible_run(self):
        # AuthMiddleware's lazy user stands for a User or an AnonymousUser.
        user = cast(User | AnonymousUser | None, self.scope.get("user"))
        return Run.objects.visible_to(user).filter(pk=self.run_id).first()

    async def _say(self, message: HelloMessage | PongMessage):
        await self.send(text_data=message.model_dump_json())

    async def _forward(self, message):
        if await self._may_still_listen():
            await self.send(text_data=message["text"])  # already JSON: see runs.live.events.publish

    run_status = run_metrics = run_samples = run_log = run_checkpoint = run_evaluation = run_alarm = _forward

    async def access_recheck(self, message):
        await self._may_still_listen(now=True)

    async def access_session_ended(self, message):
        if self.session and message.get("session") == self.session:
            await self._lose_access()

    async def _may_still_listen(self, now: bool = False) -> bool:
        """Checks again when asked to, or when the last check is older than LIVE_ACCESS_RECHECK_S."""
        if self.access_lost:
            return False
        if now or time.monotonic() - self.checked_at >= settings.LIVE_ACCESS_RECHECK_S:
            allowed = await database_sync_to_async(may_still_listen)(self.listener)
            self.checked_at = time.monotonic()
            if not allowed:
                await self._lose_access()
        return not self.access_lost

    async def _lose_access(self):
        if not self.access_lost:
            self.access_lost = True
            await self.close(code=ACCESS_LOST)
