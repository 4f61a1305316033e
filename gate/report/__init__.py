"""Reports: ``report.json``, ``report.md`` and a self-contained ``index.html`` with PNG plots.

Every page and every plot of an evaluation the gate refuses is marked "not publishable",
and a broken gold anchor puts its banner at the top of each page.
"""

from gate.report.document import report_document
from gate.report.writer import ReportFiles, write_report

__all__ = ["ReportFiles", "report_document", "write_report"]
