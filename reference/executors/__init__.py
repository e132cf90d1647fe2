"""Executors: carry out the plans of spec.actions on storage, as Apache Hudi's action executors do."""
