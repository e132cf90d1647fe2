"""Pictures of the format, drawn from the code that states its rules and from real tables.

Every picture is a function of the rule or the table it shows: the spec site draws them at build
time (``docs/hooks.py``), and ``hudi-spec fsview TABLE --output mermaid|svg`` draws a user's table.
SVG is written by hand-rolled helpers (``svg.py``), so the site needs no script to show them.
"""
