"""Reports: ``report.json``, ``report.md``, a self-contained ``index.html`` with its plots (PNG
and SVG files beside it), and ``trials.html``, every counted trial with its detail.

Every page and every plot of an evaluation the gate refuses is marked "not publishable",
and a broken gold anchor puts its banner at the top of each page.
"""

from migration_evals.gate.report.document import report_document
from migration_evals.gate.report.trials_page import TrialsPage, trials_page
from migration_evals.gate.report.writer import ReportFiles, write_report

__all__ = ["ReportFiles", "TrialsPage", "report_document", "trials_page", "write_report"]
