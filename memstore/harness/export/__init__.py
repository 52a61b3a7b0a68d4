"""Export: memstore's scenarios as other harnesses' tasks, graded there as memstore grades.

`export_harbor` writes each scenario as a Harbor task folder (`harbor`: one step per session, the
repository and the memories the store hands each step in the environment, the grading data and
the portable grader in each step's tests); `harbor_files` writes its files' text.
"""

from memstore.harness.export.harbor import HANDED_LIMIT, export_harbor, step_name

__all__ = ["HANDED_LIMIT", "export_harbor", "step_name"]
