"""A TCP relay between the client under test and cinch that breaks things
on purpose: it cuts live event streams, and it can swallow the answer to a
POST after the server has done the work (so that the client must retry)."""

from __future__ import annotations

import re
import socket
import threading

_KEY = re.compile(rb"\r\nidempotency-key: *([^\r\n]*)", re.IGNORECASE)


class _Connection:
    def __init__(self, client: socket.socket, upstream: socket.socket):
        self.client = client
        self.upstream = upstream
        self.streams_events = False
        self.swallow = False

    def cut(self) -> None:
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Proxy:
    """Relays 127.0.0.1:<port> to cinch's port."""

    def __init__(self, target_port: int):
        self._target = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._connections: list[_Connection] = []
        self._swallow_next_post = False
        #: The Idempotency-Key of every POST relayed, in order.
        self.post_keys: list[str] = []
        #: How many event streams were opened through the relay.
        self.event_streams = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def swallow_next_post_answer(self) -> None:
        """The next POST reaches cinch, but its answer is dropped with the connection."""
        with self._lock:
            self._swallow_next_post = True

    def cut_event_streams(self) -> int:
        """Cuts every event stream open now; how many it cut."""
        with self._lock:
            streams = [c for c in self._connections if c.streams_events]
        for connection in streams:
            connection.cut()
        return len(streams)

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for connection in self._connections:
                connection.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._target))
            connection = _Connection(client, upstream)
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._to_server, args=(connection,), daemon=True).start()
            threading.Thread(target=self._to_client, args=(connection,), daemon=True).start()

    def _to_server(self, connection: _Connection) -> None:
        while True:
            try:
                data = connection.client.recv(65536)
            except OSError:
                data = b""
            if not data:
                connection.cut()
                return
            with self._lock:
                if data.startswith(b"POST "):
                    key = _KEY.search(data)
                    self.post_keys.append(key.group(1).decode() if key else "")
                    if self._swallow_next_post:
                        self._swallow_next_post = False
                        connection.swallow = True
                elif data.startswith(b"GET ") and b"/events " in data.split(b"\r\n", 1)[0]:
                    connection.streams_events = True
                    self.event_streams += 1
            try:
                connection.upstream.sendall(data)
            except OSError:
                connection.cut()
                return

    def _to_client(self, connection: _Connection) -> None:
        while True:
            try:
                data = connection.upstream.recv(65536)
            except OSError:
                data = b""
            if not data or connection.swallow:
                connection.cut()
                return
            try:
                connection.client.sendall(data)
            except OSError:
                connection.cut()
                return
