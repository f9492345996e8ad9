"""``python -m needlework.lm_eval``: print the folder of the task YAMLs, for --include_path."""

from . import TASKS_DIR

print(TASKS_DIR)
