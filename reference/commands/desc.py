"""``hudi-spec desc TABLE``: the table's configuration (like hudi-cli ``desc``: base and meta path, then
every property of hoodie.properties, here with what the specification says it means)."""

from __future__ import annotations

import argparse

from reference.commands import _output


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _output.table_command(sub, "desc", run, help="show the table config (hoodie.properties)")


def run(args: argparse.Namespace) -> int:
    from spec.config.table_config import KEYS_BY_NAME, TableConfig
    from spec.storage.hoodie_storage import Storage

    storage = Storage(args.table)
    cfg = TableConfig.load(storage)
    summary = {
        "basePath": storage.uri,
        "metaPath": storage.full(".hoodie"),
        "tableName": cfg.name,
        "tableType": cfg.table_type,
        "tableVersion": cfg.table_version,
        "timelineLayoutVersion": cfg.timeline_layout,
    }
    if args.output == "json":
        _output.emit_json({**summary, "properties": dict(sorted(cfg.props.items()))})
        return 0
    rows = [(k, v, "") for k, v in summary.items()]
    rows += [(k, v, KEYS_BY_NAME[k].doc if k in KEYS_BY_NAME else "") for k, v in sorted(cfg.props.items())]
    _output.emit(args.output, None, ["property", "value", "meaning"], rows, f"Hudi table {cfg.name}")
    return 0
