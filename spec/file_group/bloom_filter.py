"""The bloom filter in a base file's footer: which record keys a file may hold.

Hudi's BLOOM index reads ``org.apache.hudi.bloomfilter`` from every candidate base file's
footer to decide which files may hold an incoming key. The filter is Hadoop's bloom filter with
Hudi's defaults, serialized and Base64-encoded (checked bit for bit on real files):

- type ``DYNAMIC_V0`` (footer ``hoodie_bloom_filter_type_code``): rows of 60,000 entries, up to
  100,000 entries in all; 30 hash functions over 2,587,966 bits (``-n·ln(fpp)/ln(2)²`` for
  fpp = 1e-9);
- a key's positions: ``h = murmur(key bytes, seed=h)`` chained from seed 0, thirty times;
  position ``|h % bits|`` (Java remainder);
- ``murmur`` is Hadoop's 32-bit MurmurHash2 variant (little-endian 4-byte blocks; tail bytes
  sign-extended);
- keys are added in the order the file's rows are written; a merged base file holds the old file's
  rows in their order (touched keys merged in place), then the new keys, so where no old row was
  removed its filter is the old file's with the new keys added.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``HoodieDynamicBoundedBloomFilter``, ``InternalDynamicBloomFilter`` and ``InternalBloomFilter``
(``org.apache.hudi.common.bloom``), ``MurmurHash`` (``org.apache.hudi.common.util.hash``),
``BloomFilterFactory`` and ``HoodieMergeHandle`` (``org.apache.hudi.io``: ``write(oldRecord)``,
``writeIncomingRecords``).
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from spec.errors import MetadataFormatError

# --8<-- [start:defaults]
DEFAULT_NUM_ENTRIES = 60_000  # hoodie.index.bloom.num_entries
DEFAULT_FPP = 1e-9  # hoodie.index.bloom.fpp
DEFAULT_MAX_ENTRIES = 100_000  # hoodie.bloom.index.filter.dynamic.max.entries
MURMUR_HASH = 1
DYNAMIC_V0 = "DYNAMIC_V0"
FOOTER_KEY = "org.apache.hudi.bloomfilter"
FOOTER_TYPE_KEY = "hoodie_bloom_filter_type_code"


def bit_size(num_entries: int, fpp: float) -> int:
    """``ceil(-n · ln(fpp) / ln(2)²)``: 2,587,966 for the defaults."""
    return math.ceil(-num_entries * math.log(fpp) / (math.log(2) ** 2))


def num_hashes(bits: int, num_entries: int) -> int:
    """``ceil(ln(2) · bits / n)``: 30 for the defaults."""
    return math.ceil(math.log(2) * bits / num_entries)
# --8<-- [end:defaults]


# --8<-- [start:murmur]
_M = 0x5BD1E995


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def murmur(data: bytes, seed: int) -> int:
    """Hadoop's ``MurmurHash.hash(data, length, seed)``: 32-bit, wrapping signed arithmetic."""
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    n4 = length >> 2
    for i in range(n4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _M) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * _M) & 0xFFFFFFFF
        h = (h * _M) & 0xFFFFFFFF
        h ^= k
    left = length - (n4 << 2)
    if left:
        def signed_byte(b: int) -> int:
            return (b - 256 if b > 127 else b) & 0xFFFFFFFF

        if left >= 3:
            h ^= (signed_byte(data[length - 3]) << 16) & 0xFFFFFFFF
        if left >= 2:
            h ^= (signed_byte(data[length - 2]) << 8) & 0xFFFFFFFF
        h ^= signed_byte(data[length - 1])
        h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 15
    return _i32(h)


def positions(key: str, hashes: int, bits: int) -> list[int]:
    """The bit positions of a key: chained murmur from seed 0, ``abs(h % bits)`` with Java's remainder."""
    data = key.encode("utf-8")
    out = []
    h = 0
    for _ in range(hashes):
        h = murmur(data, h)
        rem = abs(h) % bits
        out.append(rem)
    return out
# --8<-- [end:murmur]


@dataclass
class BloomRow:
    """One Hadoop bloom filter (a row of the dynamic filter): its bits, LSB-first per byte."""

    bits: int
    hashes: int
    data: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        if not self.data:
            self.data = bytearray((self.bits + 7) // 8)

    def add_positions(self, pos: Iterable[int]) -> None:
        """Set the bits at ``pos`` (bit ``p`` is bit ``p & 7`` of byte ``p >> 3``)."""
        for p in pos:
            self.data[p >> 3] |= 1 << (p & 7)

    def has_positions(self, pos: Iterable[int]) -> bool:
        """Whether every bit at ``pos`` is set."""
        return all(self.data[p >> 3] & (1 << (p & 7)) for p in pos)


# --8<-- [start:dynamic]
@dataclass
class DynamicBloomFilter:
    """``HoodieDynamicBoundedBloomFilter`` (``DYNAMIC_V0``): rows of ``row_entries`` keys; a new row
    opens when the last is full, until ``max_entries``; then rows are reused round-robin."""

    row_entries: int = DEFAULT_NUM_ENTRIES
    fpp: float = DEFAULT_FPP
    max_entries: int = DEFAULT_MAX_ENTRIES
    rows: list[BloomRow] = field(default_factory=list)
    current_row_count: int = 0

    @property
    def bits(self) -> int:
        """Bits per row, from the entries per row and the false-positive probability."""
        return bit_size(self.row_entries, self.fpp)

    @property
    def hashes(self) -> int:
        """Hash functions per key, from the bits per row and the entries per row."""
        return num_hashes(self.bits, self.row_entries)

    def __post_init__(self) -> None:
        if not self.rows:
            self.rows = [BloomRow(self.bits, self.hashes)]

    def add(self, key: str) -> None:
        """Add a record key: its hash positions set in the current row."""
        self.add_positions(positions(key, self.hashes, self.bits))

    def add_positions(self, pos: Iterable[int]) -> None:
        """Add one key's positions: a full row opens a new row while the filter holds fewer than its maximum entries;
        past that the last row keeps taking keys."""
        if self.current_row_count >= self.row_entries:
            if len(self.rows) * self.row_entries < self.max_entries:
                self.rows.append(BloomRow(self.bits, self.hashes))
            self.current_row_count = 0
        self.rows[-1].add_positions(pos)
        self.current_row_count += 1

    def might_contain(self, key: str) -> bool:
        """Whether ``key`` may be in the file: its positions are all set in some row (never a false negative)."""
        pos = positions(key, self.rows[0].hashes, self.rows[0].bits)
        return any(row.has_positions(pos) for row in self.rows)

    def serialize(self) -> bytes:
        """``int -1, int hashes, byte hash type, int bits, int row entries, int keys in the last row,
        int rows``, then per row ``int -1, int hashes, byte hash type, int bits, bits``."""
        out = [struct.pack(">iibiiii", -1, self.hashes, MURMUR_HASH, self.bits, self.row_entries,
                           self.current_row_count, len(self.rows))]
        for row in self.rows:
            out += [struct.pack(">iibi", -1, row.hashes, MURMUR_HASH, row.bits), bytes(row.data)]
        return b"".join(out)

    def to_footer(self) -> dict[str, str]:
        """The footer key/values a base file carries for this filter."""
        return {FOOTER_KEY: base64.b64encode(self.serialize()).decode("ascii"), FOOTER_TYPE_KEY: DYNAMIC_V0}
# --8<-- [end:dynamic]


def deserialize_dynamic(data: bytes) -> DynamicBloomFilter:
    """A DYNAMIC_V0 filter from its serialized bytes (typed error if malformed)."""
    try:
        _, hashes, _, bits, row_entries, current, nrows = struct.unpack_from(">iibiiii", data, 0)
        pos = struct.calcsize(">iibiiii")
        rows = []
        for _ in range(nrows):
            _, rh, _, rbits = struct.unpack_from(">iibi", data, pos)
            pos += struct.calcsize(">iibi")
            nbytes = (rbits + 7) // 8
            if pos + nbytes > len(data):
                raise MetadataFormatError("bloom filter row runs past its data")
            rows.append(BloomRow(rbits, rh, bytearray(data[pos:pos + nbytes])))
            pos += nbytes
    except struct.error as err:
        raise MetadataFormatError(f"bloom filter is truncated: {err}") from err
    if rows and (rows[0].bits != bits or rows[0].hashes != hashes):
        raise MetadataFormatError("bloom filter rows disagree with its header")
    return DynamicBloomFilter(row_entries=row_entries, rows=rows, current_row_count=current)


def from_footer(value: str) -> DynamicBloomFilter:
    """The filter stored in a base file's footer (``org.apache.hudi.bloomfilter``, base64 of its bytes)."""
    return deserialize_dynamic(base64.b64decode(value))


def build_filter(keys: Iterable[str]) -> DynamicBloomFilter:
    """A default DYNAMIC_V0 filter holding ``keys``."""
    f = DynamicBloomFilter()
    for k in keys:
        f.add(k)
    return f
