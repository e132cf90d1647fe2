"""The spec model (the oracle): an in-memory Hudi table that applies the case language's operations
and predicts what a conforming implementation leaves behind.

The package is a strict chain, each module importing only the ones before it: ``files`` (the
in-memory files), ``state`` (the immutable table and its environment), ``queries`` (reads and
layout), ``writes`` (what a write leaves), ``actions`` (the table services as the model applies
them), ``ledger`` (the ledger it predicts) and ``table_model`` (operations and predictions, whose
public surface is re-exported here).

Source: no Hudi class — the oracle is this project's; each module it calls names its Hudi classes.
"""

from spec.model.state import Env, TableState
from spec.model.table_model import Prediction, TableModel, apply, create_table, predict

__all__ = ["Env", "Prediction", "TableModel", "TableState", "apply", "create_table", "predict"]
