"""The Spark session the reference implementation runs in.

One session per process: ``get_or_create_session`` returns the active one if there is one.
Settings favour small machines: few shuffle partitions, Arrow transfer between the JVM and
Python, UTC session time zone (Hudi instants are written in UTC by this project). Spark's own
console progress bar is off (``reference.instrumentation.progress`` draws one line on a terminal instead), and
its start-up log lines are quiet: warnings and errors only, without the notes every local session
prints (a loopback host name, no native Hadoop library), unless ``$SPARK_CONF_DIR`` has a
``log4j2.properties`` of its own.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

LOG4J2_PROPERTIES = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


def _log_config() -> Path | None:
    """A log4j2 configuration file for the driver, or None when the user's Spark configuration has one."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if conf_dir and (Path(conf_dir) / "log4j2.properties").is_file():
        return None
    path = Path(tempfile.gettempdir()) / "hudi-spec-log4j2.properties"
    try:
        if not path.is_file() or path.read_text() != LOG4J2_PROPERTIES:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".hudi-spec-log4j2-")
            with os.fdopen(fd, "w") as f:
                f.write(LOG4J2_PROPERTIES)
            os.replace(tmp, path)  # other processes starting Spark read a whole file or none
    except OSError:
        return None
    return path if " " not in str(path) else None


def get_or_create_session(master: str | None = None, app_name: str = "hudi-spec",
                          conf: Mapping[str, str] | None = None) -> Any:
    """Return the process's Spark session, creating it with hudi-spec's defaults if needed; ``conf`` is set
    on a new session after the defaults (e.g. ``spark.jars`` and the extensions of another library, so that
    it runs in the same session as the reference writer)."""
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
    conf = dict(conf or {})
    java_options = [conf.pop("spark.driver.extraJavaOptions", "")]
    for key, value in conf.items():
        builder = builder.config(key, value)
    log_config = _log_config()
    if log_config is not None:
        java_options.append(f"-Dlog4j2.configurationFile=file:{log_config}")
    if any(java_options):
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(o for o in java_options if o))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
