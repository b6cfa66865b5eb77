"""The batch report: report.json's model built from the runs' results, cleaned, and written as report.json,
report.md, the CSVs and report.html (its charts drawn with the optional matplotlib)."""
