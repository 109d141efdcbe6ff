"""An event loop on a thread of its own, for a library whose every call is a coroutine (verifiers):
callers on any thread run coroutines there and wait for the result."""
import asyncio
import threading


class LoopThread:
    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coroutine, timeout_s: float | None = None):
        """The coroutine's result; past `timeout_s` it is cancelled and TimeoutError raised."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout_s)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self, grace_s: float = 5.0) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(grace_s)
        if not self.thread.is_alive():
            self.loop.close()
