"""torchrun with its stores bound to one address: `python -m worker.trainer.distributed.bound_torchrun
[--store-listen ADDRESS] [torchrun args]` (ADDRESS: 127.0.0.1 unless given).

torchrun's c10d stores (the rendezvous's, and the one it shares with the processes, which carries
the leader's orders) listen on every interface: TCPStore's server binds the wildcard address
whatever host it is given (torch 2.13; --rdzv-endpoint, --master-addr and --local-addr change
only where clients connect). Here each store server is handed a socket of our own, bound to
ADDRESS (TCPStore's master_listen_fd): loopback for a trainer on one machine, so nothing off it
reaches them; the first machine's cluster address for a trainer over several (static rendezvous),
so nothing on its other networks does. Where this torch has no such hook the launch fails rather
than listen on every interface.
"""
import socket
import sys

LOOPBACK = "127.0.0.1"
LISTEN_FLAG = "--store-listen"


def bound_listener(address: str, port: int) -> tuple[int, int]:
    """A listening socket on `address`:`port` (0: any free port): its descriptor and port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address, port))
    sock.listen(socket.SOMAXCONN)
    bound = sock.getsockname()[1]
    return sock.detach(), bound  # the store owns the descriptor from now on


def store_factory(listen: str):
    """torch's TCPStore as torchrun calls it (positionally in its static rendezvous, by keyword
    elsewhere), its server, where this process hosts one, listening on `listen` alone."""
    from torch.distributed import TCPStore

    def bound_store(host: str, port: int, world_size=None, is_master: bool = False, *args, **kwargs):
        kwargs.update(zip(("timeout", "wait_for_workers", "multi_tenant"), args))  # as TCPStore names them
        if not is_master:
            return TCPStore(host, port, world_size, False, **kwargs)
        fd, bound = bound_listener(listen, port)
        return TCPStore(listen, bound, world_size, True, master_listen_fd=fd, **kwargs)

    return bound_store


def bind_stores_to(listen: str) -> None:
    """Routes every place torchrun's rendezvous starts a store server through store_factory."""
    from torch.distributed.elastic.rendezvous import c10d_rendezvous_backend, dynamic_rendezvous, static_tcp_rendezvous

    handler = getattr(dynamic_rendezvous, "DynamicRendezvousHandler", None)
    if not hasattr(c10d_rendezvous_backend, "TCPStore") or not hasattr(static_tcp_rendezvous, "TCPStore") \
            or handler is None or not hasattr(handler, "_create_tcp_store_server"):
        raise RuntimeError("this torch's torchrun creates its stores elsewhere; not starting trainer processes "
                           "whose store would listen on every interface (worker/trainer/distributed/"
                           "bound_torchrun.py needs updating)")
    bound_store = store_factory(listen)
    # The class the rendezvous calls, replaced by a function that makes one: setattr says so.
    setattr(c10d_rendezvous_backend, "TCPStore", bound_store)  # noqa: B010
    setattr(static_tcp_rendezvous, "TCPStore", bound_store)  # noqa: B010
    handler._create_tcp_store_server = lambda self, addr, port: bound_store(addr, port, is_master=True,
                                                                            multi_tenant=True)


def split_listen(argv: list[str]) -> tuple[str, list[str]]:
    """(the address the stores listen on, torchrun's own arguments)."""
    if argv[:1] == [LISTEN_FLAG]:
        return argv[1], argv[2:]
    return LOOPBACK, argv


def main() -> None:
    listen, torchrun_args = split_listen(sys.argv[1:])
    bind_stores_to(listen)
    from torch.distributed.run import main as torchrun

    torchrun(torchrun_args)


if __name__ == "__main__":
    main()
