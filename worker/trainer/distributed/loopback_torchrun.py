"""torchrun with its stores on loopback: `python -m worker.trainer.distributed.loopback_torchrun [torchrun args]`.

A run of several trainer processes lives on one machine (torchrun --standalone), yet
torchrun's two c10d stores (the rendezvous's and the one it shares with the processes, which
carries the leader's orders) listen on every interface: TCPStore's server binds the wildcard
address whatever host it is given (torch 2.13; --rdzv-endpoint and --local-addr change only
where clients connect). Here each store server is handed a socket of our own, bound to
127.0.0.1 (TCPStore's master_listen_fd), so nothing off this machine reaches them. Where this
torch has no such hook the launch fails rather than listen on every interface.
"""
import socket
import sys

LOOPBACK = "127.0.0.1"


def loopback_listener(port: int) -> tuple[int, int]:
    """A listening socket on LOOPBACK:`port` (0: any free port): its descriptor and port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(socket.SOMAXCONN)
    bound = sock.getsockname()[1]
    return sock.detach(), bound  # the store owns the descriptor from now on


def loopback_store(host: str, port: int, *, is_master: bool = False, **kwargs):
    """torch's TCPStore, its server (if this is the master) listening on loopback only. torchrun
    names every argument after the address (torch 2.13)."""
    from torch.distributed import TCPStore

    if not is_master:
        return TCPStore(host, port, is_master=False, **kwargs)
    fd, bound = loopback_listener(port)
    return TCPStore(LOOPBACK, bound, is_master=True, master_listen_fd=fd, **kwargs)


def keep_stores_on_loopback() -> None:
    """Routes the two places torchrun's c10d rendezvous starts a store server through loopback_store."""
    from torch.distributed.elastic.rendezvous import c10d_rendezvous_backend, dynamic_rendezvous

    handler = getattr(dynamic_rendezvous, "DynamicRendezvousHandler", None)
    if not hasattr(c10d_rendezvous_backend, "TCPStore") or handler is None \
            or not hasattr(handler, "_create_tcp_store_server"):
        raise RuntimeError("this torch's torchrun creates its stores elsewhere; not starting trainer processes "
                           "whose store would listen on every interface (worker/trainer/distributed/"
                           "loopback_torchrun.py needs updating)")
    # The class the backend calls, replaced by a function that makes one: setattr says so.
    setattr(c10d_rendezvous_backend, "TCPStore", loopback_store)  # noqa: B010
    handler._create_tcp_store_server = lambda self, addr, port: loopback_store(
        addr, port, is_master=True, multi_tenant=True)


def main() -> None:
    keep_stores_on_loopback()
    from torch.distributed.run import main as torchrun

    torchrun(sys.argv[1:])


if __name__ == "__main__":
    main()
