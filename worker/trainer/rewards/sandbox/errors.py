"""The one error a sandboxed call raises, with a kind that says which limit or mistake it was."""

# kind → what it means; the message says the specifics.
KINDS = {
    "syntax": "the code does not parse",
    "definition": "the code defines no usable reward function (or environment step, or TOOLS)",
    "exception": "the code raised an exception",
    "timeout": "a call ran past its time limit",
    "memory": "a call ran past the memory limit",
    "output": "a call printed more than the output limit",
    "processes": "a call started more processes than the process limit",
    "result_type": "the result is not a list of numbers or None",
    "result_length": "the result has the wrong number of values",
    "result_value": "the result holds NaN or an infinite value",
    "reply_type": "an environment's answer is not JSON",
    "result_size": "the reply is larger than the reply limit",
    "crashed": "the process died during the call",
    "protocol": "the process answered something unreadable",
    "refused": "this machine cannot keep user code off the network, and the operator has not accepted that",
}


class SandboxError(RuntimeError):
    def __init__(self, kind: str, message: str, traceback: str = "", line: int | None = None, output: str = ""):
        assert kind in KINDS, kind
        super().__init__(message)
        self.kind, self.message, self.traceback, self.line, self.output = kind, message, traceback, line, output

    def __str__(self) -> str:
        # Logged as the reason a run's rewards are None: the traceback is what the author needs.
        return f"{self.message}\n{self.traceback.rstrip()}" if self.traceback else self.message

    def as_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "traceback": self.traceback, "line": self.line}
