"""A writer process for the crash-safety tests: one write, killed at the fault point its environment names.

Usage: python tests/crash_child.py TABLE OPERATION RECORDS_JSON OPTIONS_JSON
"""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa

from reference.client import WriteClient
from reference.faults import PGID_ENV


def main() -> int:
    # the fault kills this process group: the driver, the Spark JVM it starts and their workers
    os.environ[PGID_ENV] = str(os.getpgrp())
    path, operation, records, options = sys.argv[1:5]
    WriteClient(path).write(pa.Table.from_pylist(json.loads(records)), operation, json.loads(options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
