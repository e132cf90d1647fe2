"""Log files: the blocks of a merge-on-read file slice.

``log_format`` (how blocks are framed), ``corrupt_block`` (bytes that frame as no block), ``log_blocks`` (each
block type's content), ``delete_block`` (the keys a block deletes), ``scanner`` (which blocks a reader applies, in
what order).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieLogFormatWriter``,
``HoodieLogBlock``, ``HoodieDeleteBlock`` and ``AbstractHoodieLogRecordScanner``; each module names its own.
"""
