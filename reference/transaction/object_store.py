"""S3's single-request and conditional writes, carried out with boto3 (``spec.storage.hoodie_storage.ObjectStore``).

``pyarrow.fs`` cannot write conditionally, and writes every object as a multipart upload (three
requests). This client does what ``spec.storage.hoodie_storage`` asks of an object store in one request each:

- ``put_if_absent``: ``PutObject`` with ``If-None-Match: *`` — S3 answers 412 when the key exists,
  so of any number of writers racing for one key exactly one creates it (Hudi's
  ``S3StorageLockClient.createOrUpdateLockFileInternal`` creates the lock file the same way);
- ``put_if_match``: ``PutObject`` with ``If-Match: <ETag>`` (412 when the object changed), as
  ``S3StorageLockClient`` renews and releases its lock;
- ``put``, ``get``, ``head``, ``delete`` (``DeleteObjects``, up to 1000 keys a request).

A conditional write whose response is lost is sent again by botocore's retries; the second attempt
then fails its condition against the first one's object (412), though the write went through. So
each conditional write carries a token of its own as user metadata (``x-amz-meta-hudi-spec-write``),
and a 412 is read back with one ``HEAD``: the object holding this write's token means the write won.
Without that, a writer that created an instant or took the lock would report a conflict, leaving
an orphan requested instant or a lock held by no one until it expired.

The client is configured the standard AWS way: ``AWS_ENDPOINT_URL`` (or ``AWS_ENDPOINT_URL_S3``),
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` or any other boto3 credential source, and
``AWS_REGION``/``AWS_DEFAULT_REGION``. Importing ``reference`` registers it for ``s3://`` and
``s3a://`` paths.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from spec.errors import InvalidConfig

PRECONDITION_FAILED = 412
"""S3's answer to a failed ``If-None-Match`` / ``If-Match`` condition (``S3StorageLockClient``)."""
CONDITIONAL_CONFLICT = 409
"""S3's answer when another conditional write to the key is in progress: retried."""
DELETE_BATCH = 1000
"""``DeleteObjects`` takes at most 1000 keys."""
CONFLICT_RETRIES = 5
WRITE_TOKEN = "hudi-spec-write"
"""The user-metadata key of a conditional write's own token (sent as ``x-amz-meta-hudi-spec-write``)."""

_clients: dict[int, Any] = {}
_clients_lock = threading.Lock()


def _client() -> Any:
    """One boto3 S3 client per process (boto3 clients are thread safe; a fork gets its own)."""
    import os

    pid = os.getpid()
    with _clients_lock:
        if pid not in _clients:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as err:
                raise InvalidConfig("s3:// tables need boto3 for conditional writes",
                                    hint="pip install 'hudi-spec[s3]'") from err
            _clients[pid] = boto3.session.Session().client(
                "s3", config=Config(max_pool_connections=64, retries={"max_attempts": 5, "mode": "standard"}))
        return _clients[pid]


def _split(path: str) -> tuple[str, str]:
    bucket, _, key = path.partition("/")
    return bucket, key


def _status(err: Exception) -> int:
    response = getattr(err, "response", None) or {}
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


class S3ObjectStore:
    """``spec.storage.hoodie_storage.ObjectStore`` on S3 through boto3."""

    def __init__(self) -> None:
        self.client = _client()

    def get(self, path: str) -> tuple[bytes, str] | None:
        bucket, key = _split(path)
        try:
            r = self.client.get_object(Bucket=bucket, Key=key)
        except self.client.exceptions.NoSuchKey:
            return None
        return r["Body"].read(), str(r["ETag"])

    def head(self, path: str) -> int | None:
        bucket, key = _split(path)
        try:
            r = self.client.head_object(Bucket=bucket, Key=key)
        except Exception as err:  # botocore's ClientError; a 404 has no typed exception for HEAD
            if _status(err) == 404:
                return None
            raise
        return int(r["ContentLength"])

    def put(self, path: str, data: bytes) -> str:
        bucket, key = _split(path)
        return str(self.client.put_object(Bucket=bucket, Key=key, Body=data)["ETag"])

    def _conditional(self, path: str, data: bytes, **condition: str) -> str | None:
        bucket, key = _split(path)
        token = uuid.uuid4().hex
        for _ in range(CONFLICT_RETRIES):
            try:
                return str(self.client.put_object(Bucket=bucket, Key=key, Body=data,
                                                  Metadata={WRITE_TOKEN: token}, **condition)["ETag"])
            except Exception as err:
                status = _status(err)
                if status == PRECONDITION_FAILED:
                    return self._landed(bucket, key, token)
                if status != CONDITIONAL_CONFLICT:
                    raise
        return self._landed(bucket, key, token)  # still contended: whose write went through?

    def _landed(self, bucket: str, key: str, token: str) -> str | None:
        """The object's ETag when it holds the write of ``token`` (an earlier attempt of this very write
        went through, its response lost); None when another writer's write is there, or none is."""
        try:
            r = self.client.head_object(Bucket=bucket, Key=key)
        except Exception as err:
            if _status(err) == 404:
                return None
            raise
        return str(r["ETag"]) if r.get("Metadata", {}).get(WRITE_TOKEN) == token else None

    def put_if_absent(self, path: str, data: bytes) -> str | None:
        return self._conditional(path, data, IfNoneMatch="*")

    def put_if_match(self, path: str, data: bytes, version: str) -> str | None:
        return self._conditional(path, data, IfMatch=version)

    def delete(self, paths: Sequence[str]) -> None:
        by_bucket: dict[str, list[str]] = {}
        for p in paths:
            bucket, key = _split(p)
            by_bucket.setdefault(bucket, []).append(key)
        for bucket, keys in by_bucket.items():
            if len(keys) == 1:
                self.client.delete_object(Bucket=bucket, Key=keys[0])
                continue
            for i in range(0, len(keys), DELETE_BATCH):
                self.client.delete_objects(Bucket=bucket, Delete={
                    "Objects": [{"Key": k} for k in keys[i:i + DELETE_BATCH]], "Quiet": True})



def object_store_env() -> dict[str, str]:
    """The driver's AWS settings (endpoint, region, keys), shipped with every Spark task that reaches
    storage: a task's environment is the one its session started with, which may lack them."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_")}


def adopt_env(env: Mapping[str, str]) -> None:
    """In a task: take the driver's settings it lacks (a task reaches the object store as the driver does)."""
    for key, value in env.items():
        os.environ.setdefault(key, value)


__all__ = ["S3ObjectStore", "adopt_env", "object_store_env"]
