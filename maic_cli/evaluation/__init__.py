"""The evaluation harness: scenarios, the batch runner, lesson runs, judging, results, statistics and reports."""
