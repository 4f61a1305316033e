"""Statistics, judge agreement, gold-anchor correlation, contamination, the gate, reports.

One evaluation, many views::

    ledger_scan   one pass: the hash chain checked, every trial's facts gathered
    selection     which trials count (the latest per changeset, recipe and model)
    numbers       pass rates, funnel, cost, contamination, hypotheses (from facts alone)
    anchor        the gold anchor: phi against real outcomes, or "broken"
    judges        strict-mode judge agreement; the judge-reliability probe
    evaluation    all of the above, computed once
    publication   the refusal rules: ``check(evaluation) -> GateDecision``
    bundle        publication bundles and their verification by recomputation
    report        report.json, report.md, index.html and the plots
"""
