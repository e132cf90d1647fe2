"""A writer process for the concurrent-writer trials (``test_concurrent_writers``).

Usage: python tests/concurrent_writer.py TABLE OPTIONS_JSON NAME

It prints ``ready`` once its imports are done, then reads one batch per line of its stdin (a JSON list of
rows): it upserts the batch under optimistic concurrency control and prints one JSON line,
``[NAME, "ok", instant]``, ``[NAME, "conflict", message]`` or ``[NAME, "error", repr]``. The test sends
each trial's batches to both writers at the same moment, and the next ones once it has checked the table;
the writer ends when its stdin closes.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa

from reference.write.client import WriteClient
from spec.errors import WriteConflict


def main() -> int:
    path, options, name = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            result = WriteClient(path, engine="local").write(pa.Table.from_pylist(json.loads(line)), "upsert",
                                                             options)
            outcome = [name, "ok", result.instant]
        except WriteConflict as err:
            outcome = [name, "conflict", str(err)]
        except Exception as err:  # reported to the test, which fails the trial with it
            outcome = [name, "error", repr(err)]
        print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
