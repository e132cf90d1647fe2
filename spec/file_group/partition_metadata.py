"""The partition metadata file: ``.hoodie_partition_metadata`` in every partition folder.

Java partition discovery (without the metadata table) treats a folder as a partition only when it
holds this file: the instant that created the partition (``commitTime``) and its depth
(``partitionDepth``, the number of path segments), as Java ``Properties`` text.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodiePartitionMetadata``
(``trySave``, ``readFromFS``, ``getPartitionDepth``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from spec.config.properties_file import parse_properties
from spec.errors import InvalidTable
from spec.timeline.instant import validate_instant_time

# --8<-- [start:partition_metadata]
PARTITION_METADATA_FILE = ".hoodie_partition_metadata"


def partition_depth(partition_path: str) -> int:
    """Number of path segments of a partition (0 for the non-partitioned base path)."""
    return len([p for p in partition_path.split("/") if p]) if partition_path else 0


@dataclass(frozen=True)
class PartitionMetadata:
    """``.hoodie_partition_metadata``: the instant that created the partition, and its depth.

    Java partition discovery (without the metadata table) treats a folder as a partition
    only when it holds this file, so every partition gets one before its first data file.
    """

    commit_time: str
    depth: int

    def __post_init__(self) -> None:
        validate_instant_time(self.commit_time, metadata_suffix=True)
        if self.depth < 0:
            raise InvalidTable(f"partition depth {self.depth} is negative", hint="depth counts path segments")

    def format(self, saved_at: datetime | None = None) -> bytes:
        """The bytes of ``.hoodie_partition_metadata``: a comment line, the date line, then ``commitTime`` and
        ``partitionDepth``."""
        when = (saved_at or datetime.now(UTC)).astimezone(UTC)
        stamp = f"{when.strftime('%a %b %d %H:%M:%S')} UTC {when.year}"
        return f"#partition metadata\n#{stamp}\ncommitTime={self.commit_time}\npartitionDepth={self.depth}\n".encode()


def parse_partition_metadata(data: bytes) -> PartitionMetadata:
    """Read ``.hoodie_partition_metadata`` (Java properties with ``commitTime`` and ``partitionDepth``)."""
    props = parse_properties(data)
    depth = props.get("partitionDepth", "")
    if "commitTime" not in props or not (depth.isascii() and depth.isdigit()):
        raise InvalidTable("partition metadata lacks commitTime or a numeric partitionDepth",
                           hint="rewrite .hoodie_partition_metadata with both keys")
    return PartitionMetadata(props["commitTime"], int(depth))
# --8<-- [end:partition_metadata]
