"""A process for the crash-safety tests: one write or table service, killed at the fault point its
environment names.

Usage: python tests/crash_child.py TABLE OPERATION RECORDS_JSON OPTIONS_JSON [ENGINE]

OPERATION is a write operation (``upsert``, …), or ``compact``, ``clean`` or ``rollback`` (the
latest write; RECORDS_JSON is ignored), ``restore`` (RECORDS_JSON is the savepoint's time, as a JSON
string) or ``archive`` (with the options' ``hoodie.keep.*`` settings); ENGINE is ``spark`` (default) or
``local``.
"""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa

from reference.config.options import parse_options
from reference.executors.archive import archive
from reference.executors.clean import clean
from reference.executors.compaction import compact
from reference.executors.restore import restore
from reference.executors.rollback import rollback
from reference.instrumentation.faults import PGID_ENV
from reference.write.client import WriteClient
from spec.write.service_configs import archive_config, clean_config, compaction_config


def main() -> int:
    # the fault kills this process group: the driver, the Spark JVM it starts and their workers
    os.environ[PGID_ENV] = str(os.getpgrp())
    path, operation, records, options = sys.argv[1:5]
    engine = sys.argv[5] if len(sys.argv) > 5 else "spark"
    client = WriteClient(path, engine=engine)
    opts = json.loads(options)
    table = client.table_config()
    if operation == "compact":
        compact(client, options=opts)
    elif operation == "clean":
        assert table is not None
        clean(client.storage, table, clean_config(parse_options(opts)))
    elif operation == "rollback":
        assert table is not None
        rollback(client.storage, table)
    elif operation == "restore":
        assert table is not None
        restore(client.storage, table, json.loads(records))
    elif operation == "archive":
        assert table is not None
        cfg = parse_options(opts)
        archive(client.storage, table, archive_config(cfg), compaction_config(cfg))
    else:
        client.write(pa.Table.from_pylist(json.loads(records)), operation, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
