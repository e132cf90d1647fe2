"""Writing files (Hudi's ``org.apache.hudi.io`` and ``org.apache.hudi.index``): the write handles and what feeds
them — a write's buckets, the index, routing records to buckets, bulk insert's files, bloom filter footers and Avro
log blocks — shared by every engine."""
