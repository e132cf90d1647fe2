"""The interface between the conformance suite and an implementation under test: the case language
(``ops``), what an implementation declares and answers (``adapter``), and the ledger of a table directory
(``ledger_reads``). The adapters implement it; the suite drives them through it."""
