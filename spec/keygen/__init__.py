"""Key generators: a record's key and partition path, from its fields.

``key_generators`` (SIMPLE, COMPLEX, NON_PARTITION, CUSTOM, TIMESTAMP), ``key_values`` (a value as
the text Java prints), ``timestamp`` (timestamp partition values), ``partition_path`` (the folder a
partition value makes).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``org.apache.hudi.keygen``
(``SimpleKeyGenerator``, ``ComplexKeyGenerator``, ``TimestampBasedKeyGenerator``) and
``PartitionPathEncodeUtils``; each module names its own.
"""
