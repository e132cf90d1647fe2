"""The metadata table at ``.hoodie/metadata``.

``metadata_table`` (its ``files`` partition: the table's partitions and files without listing),
``record_schema`` (``HoodieMetadataRecord`` per table version), ``partition_type`` (the partitions, their record
types, file groups and index versions), ``index_keys`` (the keys of the index partitions and the file group each
lands in), ``index_definition`` (``.hoodie/.index_defs/index.json``), ``writer`` (the records each data
table action adds), ``hfile`` and ``hfile_writer`` (the HFile format its files are stored in).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieBackedTableMetadata``,
``HoodieMetadataPayload``, ``HoodieBackedTableMetadataWriter`` and ``HFileReaderImpl``; each module names its own.
"""
