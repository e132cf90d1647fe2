"""Table actions as planning rules: what compaction, clean, rollback, savepoint, restore and archival do.

One module per action, named as Apache Hudi names its table actions (``org.apache.hudi.table.action``):
``compaction``, ``clean``, ``rollback``, ``savepoint``, ``restore``, ``archive``, ``clustering`` (a pending
one Hudi left: what it holds), with the file slices
and groups they plan over in ``file_refs``. Every rule is a pure function over the timeline, the file
groups and the plan records; the model (``spec.model.actions``) and the reference's executors
(``reference.executors``) both call them, and only carry the plan out.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): the action executors of
``org.apache.hudi.table.action`` (``ScheduleCompactionActionExecutor``, ``CleanPlanActionExecutor``,
``BaseRollbackPlanActionExecutor``, ``SavepointActionExecutor``, ``RestorePlanActionExecutor``) and
``HoodieTimelineArchiver``; each module names its own.
"""
