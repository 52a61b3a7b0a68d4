"""Grading: the only reader of grading data (labels meet actions), after each session."""
