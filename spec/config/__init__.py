"""A table's configuration.

``properties_file`` is the Java ``Properties`` text; ``table_config`` is ``hoodie.properties`` with its
keys and defaults per table version, and the timeline layout each version uses; ``registry`` declares
every ``hoodie.*`` setting this project reads (default, aliases, parser); ``parquet_codec`` is the
compression of the Parquet files Hudi writes.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieTableConfig``,
``HoodieTableVersion``, ``ConfigProperty`` and ``HoodieStorageConfig``; each module names its own.
"""
