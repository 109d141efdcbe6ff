"""kombu's filesystem transport (the embedded broker), each message written whole before any
consumer can see it.

kombu opens a message's file under its final name and then writes it: a consumer listing the
folder in between takes the empty file, fails to decode it and stops ("Unrecoverable error:
JSONDecodeError"), which under load left the control plane's consumer dead. Here a message is
written under a name no queue reads, then renamed into place, which is atomic on one filesystem.
"""
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

WRITING_SUFFIX = ".writing"  # kombu's consumers read only names ending in ".<queue>.msg"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]  # as kombu.transport.filesystem has it
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + WRITING_SUFFIX
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
