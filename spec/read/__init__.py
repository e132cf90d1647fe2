"""Reading a table.

``query_plan`` (the checks a query passes and the slices it reads), ``merge`` (how the records of one
key combine), ``slice_merge`` (a slice's base rows with its log records, in Arrow), ``reader`` (the
normative reader of any table: snapshot, read-optimized, incremental, time travel).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieFileIndex``,
``HoodieRecordMerger``, ``HoodieMergedLogRecordScanner`` and ``MergeOnReadSnapshotRelation``; each module
names its own.
"""
