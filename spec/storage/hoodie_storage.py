"""How a table's files are reached: one small interface over ``pyarrow.fs``, following the rules
of the table's storage scheme (``spec.storage.schemes``, Hudi's ``StorageSchemes``).

Local paths are the default; any URI ``pyarrow.fs.FileSystem.from_uri`` understands (``s3://``, ``gs://``,
``hdfs://``, ``file://``) is reached by the same code. Paths given to the methods are relative to the table's base
path and use ``/`` as separator. A local path is read without ``pyarrow.fs`` (``spec.storage.local_files``).

Rules the format relies on:

- timeline files are created atomically and never overwritten (``create_if_absent``): a second
  writer that races for the same instant file fails instead of clobbering it. Locally this is a
  hard link (``link`` fails if the name exists); on an object store a conditional write
  (``If-None-Match: *`` on S3), carried out by the store's ``ObjectStore`` client;
- every other file is written whole or not at all (``write_atomic``): where a single write is
  already atomic (``write_transactional``: S3, GCS) one request; elsewhere a temporary sibling,
  then a rename;
- object stores get no directory markers (``mkdirs`` does nothing there);
- a log write on a store without append creates a new log file, written whole (``append``);
- the table lock's file is replaced only if unchanged since it was read (``put_if_match``: an
  ETag condition on S3, a compare-and-swap under ``flock`` locally);
- on a local file system, a file we replace, append to or delete loses its checksum sibling
  ``.<name>.crc``: Apache Hudi writes local files through Hadoop's ``ChecksumFileSystem``, which
  keeps one beside each file and verifies it on every read, so a stale one would make Hudi fail to
  read a file we changed ("Could not load Hoodie properties" for a ``hoodie.properties`` we rewrote).
  A file without a sibling is read unverified, as Hadoop reads any file it did not write.

Conditional writes need a client that exposes them; ``pyarrow.fs`` does not. ``spec`` states the
interface (``ObjectStore``) and the rules; a client is registered per scheme
(``spec.storage.schemes.register_object_store``; ``reference`` registers its boto3 client,
``reference.transaction.object_store``, for ``s3``/``s3a``).

Parquet files are read with pre-buffering (whole column chunks fetched in coalesced requests)
only where requests are slow, on object stores: on a local file system it only allocates large
buffers, and a first read in a process pays their page faults (about three times the time of a
plain read).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``HoodieWrapperFileSystem`` (0.15.x) and ``HoodieStorage`` (1.x, ``hudi-io``), with
``HoodieActiveTimeline.createImmutableFileInPath`` (timeline files created once).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:  # loaded when first needed: a local read needs neither (pyarrow.fs imports ssl)
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

from spec.errors import InvalidConfig, InvalidTable, WriteConflict
from spec.storage import local_files
from spec.storage.schemes import OBJECT_STORES, ObjectStore, StorageScheme, storage_scheme


@dataclass(frozen=True)
class FileStatus:
    """One listed file: its path relative to the base path, size in bytes, modification time (ms)."""

    path: str
    size: int
    mtime_ms: int
    is_dir: bool = False

    @property
    def name(self) -> str:
        """The file's name, without its folder."""
        return posixpath.basename(self.path)


_FS_SCHEMES = {"local": "file", "s3": "s3", "gcs": "gs", "hdfs": "hdfs"}

CONDITIONAL_WRITES_NEEDED = {
    "gs": "GCS's preconditions (a create with ifGenerationMatch=0, a replace with ifGenerationMatch=<generation>)",
    **{s: "Azure Blob Storage's conditional headers (a create with If-None-Match: *, a replace with If-Match: "
          "<ETag>)" for s in ("abfs", "abfss", "wasb", "wasbs", "adl")},
    "hdfs": "an exclusive create (HDFS has one, but this writer reaches HDFS through pyarrow, which offers none)",
}
"""What a writer on each unsupported scheme would need for create-if-absent and replace-if-unchanged."""


PARQUET_CACHE_BYTES = 256 * 1024 * 1024
"""At most this many bytes of parquet files fetched from object stores are kept in a process."""
PARQUET_CACHE_ENTRY_BYTES = 64 * 1024 * 1024
"""A parquet file larger than this is not kept."""


class _BytesCache:
    """A least-recently-used map of full path -> file bytes, bounded in total bytes; thread safe."""

    def __init__(self, limit: int, entry_limit: int) -> None:
        self.limit, self.entry_limit = limit, entry_limit
        self.entries: OrderedDict[str, bytes] = OrderedDict()
        self.total = 0
        self.lock = threading.Lock()

    def get(self, path: str) -> bytes | None:
        with self.lock:
            data = self.entries.get(path)
            if data is not None:
                self.entries.move_to_end(path)
            return data

    def put(self, path: str, data: bytes) -> None:
        if len(data) > self.entry_limit:
            return
        with self.lock:
            old = self.entries.pop(path, None)
            self.total -= len(old) if old is not None else 0
            self.entries[path] = data
            self.total += len(data)
            while self.total > self.limit:
                _, dropped = self.entries.popitem(last=False)
                self.total -= len(dropped)

    def drop(self, path: str) -> None:
        with self.lock:
            old = self.entries.pop(path, None)
            self.total -= len(old) if old is not None else 0


_PARQUET_CACHE = _BytesCache(PARQUET_CACHE_BYTES, PARQUET_CACHE_ENTRY_BYTES)


def _local_version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Storage:
    """A table's base path on some file system."""

    def __init__(self, base_path: str | os.PathLike[str], filesystem: pafs.FileSystem | None = None) -> None:
        text = os.fspath(base_path)
        self._fs: pafs.FileSystem | None = filesystem
        if filesystem is None and "://" not in text:  # a local path: pyarrow.fs only when a write needs it (``fs``)
            root, fs_scheme, self.local = str(Path(text).resolve()), "local", True
        else:
            import pyarrow.fs as pafs

            filesystem, root = pafs.FileSystem.from_uri(text) if filesystem is None else (filesystem, text)
            self._fs = filesystem
            fs_scheme, self.local = filesystem.type_name, isinstance(filesystem, pafs.LocalFileSystem)
        self.root: str = root.rstrip("/") or "/"
        self.uri: str = text
        self.scheme: StorageScheme = storage_scheme(text if "://" in text else _FS_SCHEMES.get(fs_scheme, "file") + "://")
        self._store: ObjectStore | None = None

    @property
    def fs(self) -> pafs.FileSystem:
        """The ``pyarrow.fs`` file system of the base path (locally made on first use)."""
        if self._fs is None:
            import pyarrow.fs as pafs

            self._fs = pafs.LocalFileSystem()
        return self._fs

    @property
    def store(self) -> ObjectStore | None:
        """The object store's client for this scheme (``register_object_store``), made on first use —
        in a Spark task after the task has its settings; None locally or when none is registered."""
        if self._store is None and not self.local:
            factory = OBJECT_STORES.get(self.scheme.scheme)
            self._store = factory() if factory is not None else None
        return self._store

    def __getstate__(self) -> dict[str, object]:
        """Pickled (for Spark tasks) without the object-store client, which is made anew where it is used."""
        return {**self.__dict__, "_store": None}

    def full(self, rel: str) -> str:
        """The file system path of ``rel`` (relative to the base path)."""
        return self.root if rel in ("", ".") else posixpath.join(self.root, rel)

    def exists(self, rel: str) -> bool:
        """Whether a file ``rel`` exists (locally also a folder; an object store has only files)."""
        if self.store is not None:
            return self.store.head(self.full(rel)) is not None
        if self.local:
            return os.path.exists(self.full(rel))
        return bool(self.fs.get_file_info(self.full(rel)).type.name != "NotFound")  # pyarrow.fs.FileType

    def is_dir(self, rel: str) -> bool:
        """Whether ``rel`` is a folder (on an object store: whether any file lies below it)."""
        if self.scheme.object_store:
            return bool(self.list(rel))
        if self.local:
            return os.path.isdir(self.full(rel))
        return bool(self.fs.get_file_info(self.full(rel)).type.name == "Directory")  # pyarrow.fs.FileType

    def list(self, rel: str = "", recursive: bool = False) -> list[FileStatus]:
        """Files and folders directly under ``rel`` (or all below it), sorted by path; [] if absent."""
        if self.local:
            entries = local_files.list_entries(self.root + "/", self.full(rel), recursive)
            return sorted((FileStatus(*e) for e in entries), key=lambda f: f.path)
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=recursive)
        out = []
        prefix = self.root + "/"
        for info in self.fs.get_file_info(selector):
            path = info.path[len(prefix):] if info.path.startswith(prefix) else info.path
            mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
            out.append(FileStatus(path, info.size or 0, mtime, info.type == pafs.FileType.Directory))
        return sorted(out, key=lambda f: f.path)

    def read(self, rel: str) -> bytes:
        """The whole content of file ``rel``; InvalidTable when it does not exist."""
        if self.store is not None:
            got = self.store.get(self.full(rel))
            if got is None:
                raise InvalidTable(f"{self.full(rel)} does not exist", hint="check the table path")
            return got[0]
        try:
            if self.local:
                return local_files.read(self.full(rel))
            with self.fs.open_input_stream(self.full(rel)) as f:
                return bytes(f.read())
        except FileNotFoundError as err:
            raise InvalidTable(f"{self.full(rel)} does not exist", hint="check the table path") from err

    def read_parquet(self, rel: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows of the parquet file ``rel`` (only ``columns`` if given); pre-buffered on object
        stores, where the file is fetched whole once (``parquet_file``)."""
        if self.store is not None:
            return _read_file(self.parquet_file(rel), columns)
        # one file through ParquetFile, not pq.read_table: the dataset scan behind read_table imports
        # pyarrow.dataset (and with it pandas), a third of a second of every short command
        with _unreadable_parquet(self.full(rel)):
            if self.local and columns is None:
                return local_files.read_parquet(self.full(rel), THREADED_READ_ROWS)
            import pyarrow.parquet as pq

            return _read_file(pq.ParquetFile(self.full(rel), filesystem=self.fs, pre_buffer=not self.local), columns)

    def parquet_file(self, rel: str) -> pq.ParquetFile:
        """The parquet file ``rel`` opened for reading (its footer read).

        On an object store a parquet file is fetched whole with one request and kept in a bounded
        in-process cache (``PARQUET_CACHE_BYTES``): a parquet file is never changed once written
        (Hudi writes a new file, or a new version, for every change), and one write reads the same
        base file several times (its footer and keys for the index, its rows in the merge handle),
        each a HEAD and two ranged GETs through ``pyarrow.fs``."""
        import pyarrow.parquet as pq

        if self.store is None:
            with _unreadable_parquet(self.full(rel)):
                return pq.ParquetFile(self.full(rel), filesystem=self.fs)
        path = self.full(rel)
        data = _PARQUET_CACHE.get(path)
        if data is None:
            got = self.store.get(path)
            if got is None:
                raise InvalidTable(f"{path} does not exist", hint="check the table path")
            data = got[0]
            _PARQUET_CACHE.put(path, data)
        with _unreadable_parquet(path):
            return pq.ParquetFile(pa.BufferReader(data), pre_buffer=True)

    def size(self, rel: str) -> int:
        """The size in bytes of ``rel`` (0 when it has none)."""
        if self.store is not None:
            return self.store.head(self.full(rel)) or 0
        if self.local:
            return local_files.size(self.full(rel))
        return int(self.fs.get_file_info(self.full(rel)).size or 0)

    def mkdirs(self, rel: str) -> None:
        """Create folder ``rel`` and its parents (nothing when it exists, nothing on an object store:
        its "folders" are key prefixes, and a directory marker is a request no reader needs)."""
        if self.scheme.directories:
            self.fs.create_dir(self.full(rel), recursive=True)

    # --8<-- [start:atomic]
    def write_atomic(self, rel: str, data: bytes) -> None:
        """Write ``data`` to ``rel`` whole: one write where a single write is atomic
        (``write_transactional``), else a temporary sibling, then a rename over the final name."""
        if self.store is not None and self.scheme.write_transactional:
            self.store.put(self.full(rel), data)
            return
        parent = posixpath.dirname(rel)
        if parent:
            self.mkdirs(parent)
        if self.scheme.write_transactional:
            with self.fs.open_output_stream(self.full(rel)) as f:
                f.write(data)
            return
        tmp = posixpath.join(parent, f".{posixpath.basename(rel)}.{uuid.uuid4().hex}.tmp")
        with self.fs.open_output_stream(self.full(tmp)) as f:
            f.write(data)
        self.fs.move(self.full(tmp), self.full(rel))
        self._drop_checksum(rel)

    def check_writable(self) -> None:
        """InvalidConfig, before anything is read or written, when this writer cannot write conditionally
        here (create if absent, replace if unchanged), which the timeline and the table lock need."""
        if self.store is None:
            self._need_local("create a file only if it is absent")

    def create_if_absent(self, rel: str, data: bytes) -> None:
        """Create ``rel`` with ``data`` only if no file of that name exists; else raise WriteConflict."""
        if self.put_if_absent(rel, data) is None:
            raise WriteConflict(f"{rel} already exists: another writer created it first",
                                hint="retry the operation; it will start a new instant")

    def put_if_absent(self, rel: str, data: bytes) -> str | None:
        """Create ``rel`` atomically if absent: its version, or None when it exists.

        Locally the data goes to a temporary sibling that is hard-linked to the final name (``link``
        fails if the name exists); on an object store it is a conditional write."""
        if self.store is not None:
            return self.store.put_if_absent(self.full(rel), data)
        self._need_local("create a file only if it is absent")
        parent = posixpath.dirname(rel)
        if parent:
            self.mkdirs(parent)
        tmp = posixpath.join(parent, f".{posixpath.basename(rel)}.{uuid.uuid4().hex}.tmp")
        with open(self.full(tmp), "wb") as f:
            f.write(data)
        try:
            os.link(self.full(tmp), self.full(rel))  # atomic, fails if the name exists
        except FileExistsError:
            return None
        finally:
            os.unlink(self.full(tmp))
        self._drop_checksum(rel)
        return _local_version(data)

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """The content of ``rel`` and its version (for ``put_if_match``); None when absent."""
        if self.store is not None:
            return self.store.get(self.full(rel))
        self._need_local("read a file with its version")
        try:
            with open(self.full(rel), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        return data, _local_version(data)

    def put_if_match(self, rel: str, data: bytes, version: str) -> str | None:
        """Replace ``rel`` only if its version is still ``version``: the new version, or None.

        Locally the comparison and the rename happen under an exclusive ``flock`` of the file's
        folder, which every local conditional replace takes; on an object store, an ETag condition."""
        if self.store is not None:
            return self.store.put_if_match(self.full(rel), data, version)
        self._need_local("replace a file only if it is unchanged")
        path = self.full(rel)
        with _locked_dir(os.path.dirname(path)):
            try:
                with open(path, "rb") as f:
                    if _local_version(f.read()) != version:
                        return None
            except FileNotFoundError:
                return None
            tmp = f"{os.path.dirname(path)}/.{os.path.basename(path)}.{uuid.uuid4().hex}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        self._drop_checksum(rel)
        return _local_version(data)

    def _need_local(self, what: str) -> None:
        if not self.local:
            scheme = self.scheme.scheme
            if scheme in ("s3", "s3a"):
                raise InvalidConfig(
                    f"{self.uri}: writing needs a client for S3's conditional writes (If-None-Match / If-Match) "
                    f"to {what} atomically, and none is registered",
                    hint="install hudi-spec[s3] (boto3) and import reference, which registers it")
            needs = CONDITIONAL_WRITES_NEEDED.get(scheme, "a create that fails when the file exists and a "
                                                          "replace that fails when it changed")
            raise InvalidConfig(
                f"{self.uri}: writing to {scheme}:// is not supported: the timeline's instant files and the table "
                f"lock need to {what} atomically, which on {scheme}:// takes {needs}; hudi-spec has no such client "
                "for it (nothing was written)",
                hint="write the table on S3 (s3://, with hudi-spec[s3]) or on local files; readers reach "
                     f"{scheme}:// through pyarrow.fs where it supports the scheme")
    # --8<-- [end:atomic]

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        """Delete file ``rel``; a missing file is fine unless ``missing_ok`` is False."""
        if self.store is not None:
            if not missing_ok and self.store.head(self.full(rel)) is None:
                raise FileNotFoundError(self.full(rel))
            self.store.delete([self.full(rel)])
            _PARQUET_CACHE.drop(self.full(rel))
            return
        try:
            self.fs.delete_file(self.full(rel))
        except FileNotFoundError:
            if not missing_ok:
                raise
        self._drop_checksum(rel)

    def _drop_checksum(self, rel: str) -> None:
        """Locally: delete Hadoop's checksum sibling of ``rel`` (``.<name>.crc``, ``ChecksumFileSystem``), which
        no longer matches what we wrote (or deleted)."""
        if self.local:
            folder, name = posixpath.split(self.full(rel))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(posixpath.join(folder, f".{name}.crc"))

    def delete_dir(self, rel: str) -> None:
        """Delete folder ``rel`` with everything below it, if it exists."""
        if self.store is not None:
            files = [self.full(f.path) for f in self.list(rel, recursive=True) if not f.is_dir]
            if files:
                self.store.delete(files)
            for f in files:
                _PARQUET_CACHE.drop(f)
            return
        if self.is_dir(rel):
            self.fs.delete_dir(self.full(rel))

    # --8<-- [start:append]
    def append(self, rel: str, data: bytes) -> int:
        """Append ``data`` to ``rel`` (creating it) and return the offset it starts at.

        On a store without append (``StorageSchemes.supportsAppend``: every object store) a log
        write creates a new log file, as Hudi's ``HoodieLogFormatWriter`` rolls over: the file must
        not exist and is written whole, created only if absent; appending to an existing one there
        raises InvalidTable. Local files are appended to in place.
        """
        if not self.local and not self.scheme.supports_append:
            if self.put_if_absent(rel, data) is None:
                raise InvalidTable(f"{self.uri} does not support appends and {rel} exists",
                                   hint="a log write on an object store goes to a new log version")
            return 0
        if not self.local:
            with self.fs.open_append_stream(self.full(rel)) as f:
                offset = int(f.tell())
                f.write(data)
            return offset
        path = self.full(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as f:
            offset = f.tell()
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if offset:
            self._drop_checksum(rel)
        return offset
    # --8<-- [end:append]


THREADED_READ_ROWS = 65_536
"""A parquet file of at least this many rows is decoded on pyarrow's threads (its columns and row groups at
once); a smaller one in the calling thread, where handing it to the pool costs more than it saves (readers
already read several files at once, ``spec.read.reader.in_order``)."""


def _read_file(file: pq.ParquetFile, columns: Sequence[str] | None) -> pa.Table:
    return file.read(columns=None if columns is None else list(columns),
                     use_threads=file.metadata.num_rows >= THREADED_READ_ROWS)


@contextlib.contextmanager
def _unreadable_parquet(path: str) -> Iterator[None]:
    """A parquet file that is missing or does not decode (truncated, overwritten) raises ``InvalidTable``
    naming it, not pyarrow's ``FileNotFoundError`` or ``ArrowInvalid``."""
    try:
        yield
    except FileNotFoundError as err:
        raise InvalidTable(f"{path} is missing", hint=_DAMAGED_HINT) from err
    except pa.ArrowInvalid as err:  # not OSError: on an object store that may be a passing network failure
        raise InvalidTable(f"{path} is not a readable parquet file: {err}", hint=_DAMAGED_HINT) from err


_DAMAGED_HINT = ("a data file the timeline names is damaged: put it back from a backup, or undo the instant that "
                 "wrote it and what came after (`hudi-spec rollback TABLE INSTANT`, or restore a savepoint)")


@contextlib.contextmanager
def _locked_dir(folder: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` (created if absent) for the duration of the block."""
    import fcntl  # only writers lock: a read loads no fcntl

    os.makedirs(folder, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
