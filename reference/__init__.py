"""The reference writer and readers built on ``spec``.

Importing the package registers the S3 client for conditional writes (``reference.transaction.object_store``) for
``s3://`` and ``s3a://`` paths; the client's module (boto3, pyarrow) is imported when a table on S3 is
first written, so that importing the package stays light (``hudi-spec --help`` imports no pyarrow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spec.storage.schemes import register_object_store

if TYPE_CHECKING:
    from spec.storage.schemes import ObjectStore


def _s3_client() -> ObjectStore:
    """The S3 client, made on first use (``spec.storage.hoodie_storage.Storage.store``)."""
    from reference.transaction.object_store import S3ObjectStore

    return S3ObjectStore()


register_object_store(("s3", "s3a"), _s3_client)
