"""Following a job the control plane does in the background (a push to the Hub, a model-played
dry run, a large upload's check) until it ends, saying its status whenever it changes."""
import time
from collections.abc import Callable

from client.session import Json


def follow(look: Callable[[], Json], ended: Callable[[Json], bool], describe: Callable[[Json], str],
           say: Callable[[str], None], every_s: float = 1.0, timeout_s: float | None = None) -> Json:
    """Looks every `every_s` until `ended`; TimeoutError (naming the last status) after `timeout_s`."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    said = None
    while True:
        state = look()
        if (words := describe(state)) != said:
            say(words)
            said = words
        if ended(state):
            return state
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"still {said} after {timeout_s:g} s")
        time.sleep(every_s)
