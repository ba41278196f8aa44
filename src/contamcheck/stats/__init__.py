"""Statistics: flags, p-values, intervals, multiple testing and the verdict."""

from .flags import (
    EXPECTED_RATE,
    FlagOutcome,
    label_permutation_test,
    mirrored_threshold,
    sign_flip_test,
)
from .intervals import wilson_interval
from .multiple import holm
from .verdict import VERDICT_LABELS, Judgement, exit_code, is_calibrated, judge

__all__ = [
    "EXPECTED_RATE",
    "VERDICT_LABELS",
    "FlagOutcome",
    "Judgement",
    "exit_code",
    "holm",
    "is_calibrated",
    "judge",
    "label_permutation_test",
    "mirrored_threshold",
    "sign_flip_test",
    "wilson_interval",
]
