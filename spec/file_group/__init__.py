"""File groups: the data files of a table and how they group into slices.

``file_naming`` (base and log file names), ``file_system_view`` (file groups and slices as of an
instant), ``partition_metadata`` (``.hoodie_partition_metadata``), ``bloom_filter`` (the key filter in
a base file's footer), and ``log_file`` (the log format, its blocks and the scanner).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``FSUtils``,
``HoodieTableFileSystemView``, ``HoodiePartitionMetadata``, ``BloomFilter`` and ``HoodieLogFormat``;
each module names its own.
"""
