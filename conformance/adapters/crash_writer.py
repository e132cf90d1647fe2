"""The child process of the reference adapter's ``crash``: one write, killed at a fault point.

Reads a JSON job on stdin — ``path``, ``operation``, ``records`` (null for ``delete_partition``),
``options``, ``clock`` (the replay clock's ``[now, fixed]``) and ``next_id`` (the next file id
number) — and writes with ``reference.write.client.WriteClient`` under the fault the environment names
(``HUDI_SPEC_FAULT``). The parent starts it in a session of its own: the fault kills this process
group (the driver, its Spark JVM and the Python workers) and nothing else. Reaching the end means
the fault never fired: exit code 3. A write refused before the fault point (a ``spec.errors`` error: bad
input, say) prints its kind, message and hint as one JSON line on stdout and exits with code 4, so the
parent raises the same error.

    python -m conformance.adapters.crash_writer < job.json
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    import pyarrow as pa

    from conformance.adapters.reference_spark import REFUSED, FileIds, ReplayClock
    from reference.instrumentation.faults import PGID_ENV
    from reference.write.client import WriteClient
    from spec.errors import HudiSpecError

    os.environ[PGID_ENV] = str(os.getpgrp())
    job = json.load(sys.stdin)
    clock = ReplayClock()
    clock.now, clock.fixed = job["clock"]
    ids = FileIds()
    ids.skip_to(int(job["next_id"]))
    data = None if job["records"] is None else pa.Table.from_pylist(job["records"])
    client = WriteClient(job["path"], None, clock, ids, engine=job.get("engine", "spark"))
    try:
        client.write(data, job["operation"], job["options"])
    except HudiSpecError as err:
        print(json.dumps({"kind": err.kind, "message": err.message, "hint": err.hint}), flush=True)
        return REFUSED
    return 3


if __name__ == "__main__":
    sys.exit(main())
