"""The executable specification of the Apache Hudi table format: one module per concept, pure rules.

Imports only the standard library, ``fastavro`` and ``pyarrow``; reads any table, whoever wrote it.
"""
