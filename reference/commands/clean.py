"""``hudi-spec clean TABLE``: run the cleaner (like ``CALL run_clean``).

``--policy`` is ``hoodie.cleaner.policy`` (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS,
KEEP_LATEST_BY_HOURS) and ``--retained N`` the retention of that policy (commits, file versions
or hours; Hudi's defaults 10, 3 and 24). ``--dry-run`` prints the plan without writing anything.
Nothing to clean writes no instant. ``--option hoodie.write.lock.provider=...`` names the table lock it takes
(``reference.commands._service_options``). Output: one row per deleted file.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from reference.commands import _output
from reference.commands._service_options import add_option_argument, service_config
from spec.config.registry import (
    CLEAN_POLICIES,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    default,
)
from spec.errors import InvalidConfig

if TYPE_CHECKING:
    from spec.actions.clean import CleanConfig

COLUMNS = ["clean_time", "partition_path", "file"]
RETENTIONS = ("clean_commits_retained", "clean_file_versions_retained", "clean_hours_retained")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "clean", run, help="delete file slices no retained query needs")
    p.add_argument("--policy", default=KEEP_LATEST_COMMITS, help=f"one of {', '.join(CLEAN_POLICIES)}")
    p.add_argument("--retained", type=int, default=None,
                   help="commits / file versions / hours retained (default "
                        f"{' / '.join(str(default(n)) for n in RETENTIONS)})")
    p.add_argument("--dry-run", action="store_true", help="show what would be deleted; change nothing")
    _output.add_engine_option(p, ("local",), what="local: clean runs in this process (it has no Spark step)")
    add_option_argument(p)


def clean_config(policy: str, retained: int | None) -> CleanConfig:
    """The CleanConfig of a policy name and its retention number."""
    from spec.actions.clean import CleanConfig

    name = policy.upper()
    if name not in CLEAN_POLICIES:
        raise InvalidConfig(f"unknown cleaner policy {policy!r}", hint=f"use one of {', '.join(CLEAN_POLICIES)}")
    if retained is None:
        return CleanConfig(name)
    if name == KEEP_LATEST_FILE_VERSIONS:
        return CleanConfig(name, file_versions_retained=retained)
    if name == KEEP_LATEST_BY_HOURS:
        return CleanConfig(name, hours_retained=retained)
    return CleanConfig(name, commits_retained=retained)


def run(args: argparse.Namespace) -> int:
    from reference.executors.clean import clean, plan_table_clean
    from reference.executors.common import load_table

    cfg = service_config(args)
    storage, table = load_table(args.table)
    config = clean_config(args.policy, args.retained)
    if args.dry_run:
        plan = plan_table_clean(storage, table, config)
        files = plan.files_to_delete
        instant = None
    else:
        result = clean(storage, table, config, lock=cfg.lock)
        files, instant = result.deleted, result.instant
    rows = [{"clean_time": instant, "partition_path": p, "file": f} for p, fs in sorted(files.items()) for f in fs]
    data = {"clean_time": instant, "dry_run": args.dry_run, "policy": config.policy,
            "total_files_deleted": len(rows), "files": rows}
    title = ("Clean plan (dry run)" if args.dry_run else f"Clean {instant}" if instant else "Nothing to clean")
    _output.emit_rows(args.output, rows, COLUMNS, data=data, title=title)
    return 0
