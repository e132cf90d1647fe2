"""A local S3-API server for tests: moto on 127.0.0.1, on a free port, with a request log.

Tables on it are reached as a user reaches S3: ``s3://bucket/path`` URIs and the standard AWS
environment variables (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_REGION``). Nothing listens beyond loopback. Every request the server answers is counted
(``requests``), so tests and the bench can state what an operation costs.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

REGION = "us-east-1"


@dataclass
class RequestLog:
    """(method, path, query) of every request the server answered, in order."""

    entries: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, path: str, query: str) -> None:
        with self.lock:
            self.entries.append((method, path, query))

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()

    def snapshot(self) -> list[tuple[str, str, str]]:
        with self.lock:
            return list(self.entries)


class _CountingServer(ThreadedMotoServer):
    """ThreadedMotoServer whose WSGI app records each request first."""

    def __init__(self, log: RequestLog) -> None:
        super().__init__(ip_address="127.0.0.1", port=0, verbose=False)
        self.log = log

    def _server_entry(self) -> None:
        app = DomainDispatcherApplication(create_backend_app)

        def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            self.log.add(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", ""))
            return app(environ, start_response)  # type: ignore[no-any-return]

        self._server = make_server(self._ip_address, self._port, counting, True, request_handler=_QuietHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


class _QuietHandler(MotoRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:
        pass


class S3Server:
    """moto serving the S3 API on 127.0.0.1; ``env`` holds the variables a client needs."""

    def __init__(self) -> None:
        self.log = RequestLog()
        self._server = _CountingServer(self.log)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                    "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
                    "AWS_EC2_METADATA_DISABLED": "true"}

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                            aws_secret_access_key="testing", region_name=REGION)

    def new_bucket(self) -> str:
        """A fresh empty bucket; its name."""
        name = f"t-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def storage_options(self) -> dict[str, str]:
        """What hudi-rs (object_store) needs to reach the server."""
        return {"aws_endpoint_url": self.endpoint, "aws_access_key_id": "testing",
                "aws_secret_access_key": "testing", "aws_region": REGION, "aws_allow_http": "true"}

    def stop(self) -> None:
        self._server.stop()


@contextmanager
def running_s3_server() -> Iterator[S3Server]:
    """A server for the block, reached as a user reaches S3: the standard AWS variables are set while it
    runs and restored (or removed) after it stops."""
    server = S3Server()
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    try:
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()
