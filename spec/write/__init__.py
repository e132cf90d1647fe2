"""Writing: the rules a write follows before and while it writes files.

``writer_utils`` (a write's options against the table's), ``partitioner`` (bucket assignment of a
batch), ``bulk_insert``, ``stream_buckets`` (Flink's bucket assigner), ``append_handle`` (log blocks of a
merge-on-read write), ``service_configs`` (the table services' configs from one object of settings),
``ledger`` (what every file says about who wrote it, and the write statistics of a commit), ``markers``
(the data files a write in flight names).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieWriterUtils``,
``UpsertPartitioner``, ``BucketAssigner``, ``HoodieAppendHandle``, ``HoodieWriteConfig`` and
``HoodieWriteStat``; each module names its own.
"""
