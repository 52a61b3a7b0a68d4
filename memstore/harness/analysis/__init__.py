"""Scoring and analysis: grading data meets what agents did, then metrics, comparisons, results files."""
