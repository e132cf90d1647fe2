"""Storage on an object store (S3, served by moto on 127.0.0.1) and on local files, by Hudi's scheme rules.

- the scheme table is Hudi's ``StorageSchemes``; an unknown scheme is refused;
- create-if-absent is atomic: 16 threads racing for one key, exactly one winner, every round;
- a file is written with one PUT where one PUT is atomic: no temporary object, copy or delete;
- no directory markers on object stores;
- a log write on a store without append creates a new file; appending to an existing one is refused;
- a conditional replace succeeds only on the version it names.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import reference  # noqa: F401  (registers the S3 client)
from spec.errors import InvalidConfig, InvalidTable, WriteConflict
from spec.storage.hoodie_storage import Storage
from spec.storage.schemes import STORAGE_SCHEMES, storage_scheme

ROUNDS = 20
RACERS = 16


def test_scheme_table_is_hudis() -> None:
    s3, gs, local, hdfs = (STORAGE_SCHEMES[k] for k in ("s3", "gs", "file", "hdfs"))
    assert (s3.supports_append, s3.write_transactional, s3.atomic_creation, s3.storage_lock) == (False, True,
                                                                                                   False, True)
    assert s3.object_store and gs.object_store and not local.object_store
    assert (local.supports_append, local.atomic_creation) == (False, True)  # Hudi's row; we append to POSIX files
    assert hdfs.supports_append and not hdfs.object_store
    assert len(STORAGE_SCHEMES) == 30
    assert storage_scheme("s3a://b/t").scheme == "s3a" and storage_scheme("/data/t").scheme == "file"
    with pytest.raises(InvalidConfig, match="not one Apache Hudi supports"):
        storage_scheme("ftp://host/t")


@pytest.mark.parametrize(("uri", "needs"), [("gs://bucket/t", "ifGenerationMatch=0"),
                                             ("abfs://c@account.dfs.core.windows.net/t", "If-None-Match: \\*")])
def test_writes_to_gcs_and_azure_are_refused_before_any_request(uri: str, needs: str) -> None:
    """No local GCS or Azure server is available to test an atomic create against, so writing there is
    refused up front, saying what is missing and what to do (no request: no credentials are needed)."""
    import pyarrow as pa

    from reference.api import HudiTable

    with pytest.raises(InvalidConfig, match=f"is not supported.*{needs}.*nothing was written") as err:
        options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"}
        HudiTable(uri, engine="local").write(pa.table({"id": [1], "ts": [1]}), "insert", options)
    assert "write the table on S3" in (err.value.hint or "")


def _race(storage: Storage, key: str) -> list[int]:
    """The racers that created ``key``; any failure other than losing the race fails the round, named."""
    winners: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(RACERS)

    def go(i: int) -> None:
        barrier.wait()
        try:
            storage.create_if_absent(key, f"writer {i}".encode())
            winners.append(i)
        except WriteConflict:
            pass
        except BaseException as e:  # reported below, with the round
            errors.append(e)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} racer(s) failed other than by losing: {errors[0]!r}"
    return winners


@pytest.mark.parametrize("where", ["s3", "local"])
def test_create_if_absent_has_exactly_one_winner_every_round(where: str, s3_server: Any, tmp_path: Path) -> None:
    storage = Storage(f"s3://{s3_server.new_bucket()}/t" if where == "s3" else str(tmp_path))
    for r in range(ROUNDS):
        key = f".hoodie/{r:05d}.commit"
        winners = _race(storage, key)
        assert len(winners) == 1, f"round {r}: {len(winners)} writers created {key}"
        assert storage.read(key) == f"writer {winners[0]}".encode()  # the winner's bytes, never overwritten


def test_one_put_per_file_and_no_directory_markers(s3_server: Any) -> None:
    bucket = s3_server.new_bucket()
    storage = Storage(f"s3://{bucket}/t")
    s3_server.log.clear()
    storage.mkdirs("a/b/c")
    storage.write_atomic("a/b/c/file.bin", b"x" * 1000)
    storage.create_if_absent(".hoodie/001.commit", b"{}")
    requests = s3_server.log.snapshot()
    assert [(m, p) for m, p, _ in requests] == [("PUT", f"/{bucket}/t/a/b/c/file.bin"),
                                                ("PUT", f"/{bucket}/t/.hoodie/001.commit")]
    keys = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert sorted(keys) == ["t/.hoodie/001.commit", "t/a/b/c/file.bin"]  # no "folder/" objects


def test_log_write_on_s3_is_a_new_whole_file(s3_path: str) -> None:
    storage = Storage(s3_path)
    assert storage.append("p/.f1_20240101000000000.log.1_0-1-0", b"block") == 0
    assert storage.read("p/.f1_20240101000000000.log.1_0-1-0") == b"block"
    with pytest.raises(InvalidTable, match="does not support appends") as err:
        storage.append("p/.f1_20240101000000000.log.1_0-1-0", b"more")
    assert "new log version" in err.value.hint
    assert storage.read("p/.f1_20240101000000000.log.1_0-1-0") == b"block"  # untouched


@pytest.mark.parametrize("where", ["s3", "local"])
def test_conditional_replace_needs_the_current_version(where: str, s3_server: Any, tmp_path: Path) -> None:
    storage = Storage(f"s3://{s3_server.new_bucket()}/t" if where == "s3" else str(tmp_path))
    v1 = storage.put_if_absent(".hoodie/.locks/x.json", b"one")
    assert v1 is not None and storage.put_if_absent(".hoodie/.locks/x.json", b"again") is None
    v2 = storage.put_if_match(".hoodie/.locks/x.json", b"two", v1)
    assert v2 is not None and v2 != v1
    assert storage.put_if_match(".hoodie/.locks/x.json", b"three", v1) is None  # stale version
    assert storage.read_versioned(".hoodie/.locks/x.json") == (b"two", v2)
    assert storage.read_versioned(".hoodie/.locks/absent.json") is None


def _lose_the_first_response(storage: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the client send every put twice, as botocore's retry does when a response is lost: the first
    attempt reaches the server, its answer is dropped, and the second attempt's answer is returned."""
    client = storage.store.client  # type: ignore[union-attr]
    put = client.put_object

    def put_twice(**kwargs: Any) -> Any:
        put(**kwargs)
        return put(**kwargs)

    monkeypatch.setattr(client, "put_object", put_twice)


def test_a_conditional_write_retried_after_a_lost_response_is_known_to_have_won(
        s3_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = Storage(s3_path)
    v0 = storage.put_if_absent(".hoodie/.locks/x.json", b"zero")
    _lose_the_first_response(storage, monkeypatch)
    # the retry of a create finds the object its first attempt made: this write won, not another
    storage.create_if_absent(".hoodie/001.commit.requested", b"mine")
    assert storage.read(".hoodie/001.commit.requested") == b"mine"
    # the same for a replace: the retry's If-Match fails against the version the first attempt wrote
    assert v0 is not None
    v1 = storage.put_if_match(".hoodie/.locks/x.json", b"one", v0)
    assert v1 is not None and storage.read_versioned(".hoodie/.locks/x.json") == (b"one", v1)
    # and another writer's object is still another writer's: the loser is told so
    monkeypatch.undo()
    with pytest.raises(WriteConflict):
        Storage(s3_path).create_if_absent(".hoodie/001.commit.requested", b"theirs")
    assert Storage(s3_path).put_if_match(".hoodie/.locks/x.json", b"two", v0) is None
    assert storage.read(".hoodie/001.commit.requested") == b"mine"


def test_delete_dir_and_exists_on_s3(s3_path: str) -> None:
    storage = Storage(s3_path)
    for name in ("d/a", "d/b/c", "e"):
        storage.write_atomic(name, b"1")
    assert storage.exists("d/a") and storage.is_dir("d") and not storage.exists("d/zz")
    storage.delete_dir("d")
    assert not storage.is_dir("d") and storage.exists("e")
    assert storage.size("e") == 1
