"""The Spark session the reference implementation runs in.

One session per process: ``get_or_create_session`` returns the active one if there is one.
Settings favour small machines: few shuffle partitions, Arrow transfer between the JVM and
Python, UTC session time zone (Hudi instants are written in UTC by this project).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any


def get_or_create_session(master: str | None = None, app_name: str = "hudi-spec") -> Any:
    """Return the process's Spark session, creating it with hudi-spec's defaults if needed."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # the Python workers must be this interpreter (it has pyarrow and the project installed)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master or os.environ.get("HUDI_SPEC_SPARK_MASTER", "local[2]"))
        .appName(app_name)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("HUDI_SPEC_SPARK_DRIVER_MEMORY", "4g"))
        .config("spark.sql.warehouse.dir", os.path.join(tempfile.gettempdir(), "hudi-spec-warehouse"))
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
