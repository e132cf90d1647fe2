"""The timeline: a table's history of instants.

``instant`` (times, actions, states and the moves between them), ``layout`` (where each table
version keeps its instant files, and their names), ``active_timeline`` (the instants at their latest
states, and the questions readers and writers ask of it), ``lsm_timeline`` (the LSM history archival
moves completed instants to), ``commit_metadata`` (what a write wrote),
``avro_schemas``, ``avro_model`` and ``avro_model_codec`` (the Avro plans and metadata of the other
actions), ``conflict_resolution`` (which concurrent writes conflict).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieInstant``,
``HoodieActiveTimeline``, ``TimelineLayout``, ``HoodieCommitMetadata`` and
``SimpleConcurrentFileWritesConflictResolutionStrategy``; each module names its own.
"""
