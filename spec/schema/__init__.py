"""Schemas of a table and of its queries.

``table_schema`` (the meta columns; Avro and Arrow side by side as Hudi's writers and readers map
them), ``compatibility`` (whether one schema reads data written with another), ``evolution`` (how a
batch's column types meet the table's on write), ``query_schema`` (the schema a query reads in).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieAvroUtils``,
``AvroSchemaCompatibility``, ``AvroSchemaEvolutionUtils`` and ``TableSchemaResolver``; each module names its own.
"""
