"""Indexes: where a record of a write goes.

Source (Apache Hudi 0.15.x, 1.0.x, 1.1.x and 1.2.0): the package ``org.apache.hudi.index`` (``HoodieIndex``).
"""
