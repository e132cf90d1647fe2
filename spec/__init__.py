"""The executable specification of the Apache Hudi table format: one module per concept, pure rules.

Imports only the standard library, ``fastavro`` and ``pyarrow``; reads any table, whoever wrote it.

Source: no Hudi class of its own; each module names the Apache Hudi classes it states (the spec
site's Hudi sources page lists them).
"""
