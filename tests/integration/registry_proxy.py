#!/usr/bin/env python3
"""TCP proxy for the registry test: forwards 127.0.0.1:<listen> to 127.0.0.1:<upstream>, but
lets at most LIMIT bytes per connection flow back to the client, then either closes the
connection ("cut": a dropped download) or stops forwarding and holds it open ("stall").
Prints the listening port on stdout once ready."""
import socket
import sys
import threading

upstream_port, mode, limit = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])


def pump_up(client, server):
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            server.sendall(data)
    except OSError:
        pass


def handle(client):
    server = socket.create_connection(("127.0.0.1", upstream_port))
    threading.Thread(target=pump_up, args=(client, server), daemon=True).start()
    sent = 0
    try:
        while sent < limit:
            data = server.recv(min(65536, limit - sent))
            if not data:
                break
            client.sendall(data)
            sent += len(data)
        if sent >= limit and mode == "stall":
            threading.Event().wait()
    except OSError:
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
