"""A tiny all-reduce over TCP: every rank contributes a number and every rank learns the sum.

Reads what torch.distributed's env:// rendezvous reads (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), as set
by the dist.spmd component. Rank 0 listens on MASTER_PORT; the other ranks connect to MASTER_ADDR, which is
"localhost" on local_cwd and the rank-0 container's name on local_docker. Standard library only.
"""

import os
import socket
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
value = (rank + 1) * 10
print(f"rank {rank}/{world}: contributing {value}, rendezvous at {addr}", flush=True)

if rank == 0:
    with socket.create_server(("", port)) as server:
        server.settimeout(60)
        peers = [server.accept()[0] for _ in range(world - 1)]
        total = value + sum(int(peer.recv(64).decode()) for peer in peers)
        for peer in peers:
            peer.sendall(str(total).encode())
            peer.close()
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f"rank {rank}: cannot reach rank 0 at {addr}:{port}: {e}")
            time.sleep(0.2)
    with conn:
        conn.sendall(str(value).encode())
        total = int(conn.recv(64).decode())
print(f"rank {rank}/{world}: sum = {total}", flush=True)
