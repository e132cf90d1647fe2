"""How a table's files are reached and coordinated on storage.

``hoodie_storage`` is the one small interface over ``pyarrow.fs`` every reader and writer uses;
``schemes`` states what each storage scheme guarantees (atomic create, listing, conditional writes);
``lock`` is the table lock Apache Hudi 1.x keeps as a file under ``.hoodie/.locks/``; ``heartbeat``
is how a pending write tells other writers it is alive.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieStorage``,
``StorageSchemes``, ``StorageBasedLockProvider`` and ``HoodieHeartbeatClient``; each module names its own.
"""
