"""The write path: the write client (Hudi's ``BaseHoodieWriteClient``), streaming writes, a new table's creation
and the checks a write makes before it starts. It runs its data steps on an engine (``reference.engines``) and
its table services through the executors (``reference.executors``)."""
