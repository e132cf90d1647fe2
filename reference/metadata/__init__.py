"""The metadata table, kept in step with the data table by one writer (``writer.py``); its rules are
``spec.metadata``'s."""
