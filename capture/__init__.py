"""Capture one real opencode rollout and write it as an artifact (`python -m capture`, or `capture()`).

The public names: the request (`CaptureConfig`, its checks and defaults), the run (`capture`, `push`),
task building (`task_for`), the endpoint probe (`check_endpoint`), progress, and the errors.
"""

import processes  # noqa: F401  (first, from the main thread: installs the SIGTERM/atexit cleanup)

from .agent import Cancelled
from .config import (
                     BACKENDS,
                     DEFAULT_DATASET,
                     DEFAULT_FLAVOR,
                     DEFAULT_IMAGE,
                     ENDPOINT_FIELDS,
                     TASK_FIELDS,
                     CaptureConfig,
                     problems,
                     redact_url,
)
from .errors import CaptureError, flag
from .policy import PolicyError, check_public, public_problems
from .preflight import Verdict, check_endpoint
from .progress import Progress
from .run import capture, check, push
from .tasks import TaskError, TaskSpec, task_for

__all__ = ["BACKENDS", "DEFAULT_DATASET", "DEFAULT_FLAVOR", "DEFAULT_IMAGE", "ENDPOINT_FIELDS", "TASK_FIELDS",
           "Cancelled", "CaptureConfig", "CaptureError", "PolicyError", "Progress", "TaskError", "TaskSpec", "Verdict",
           "capture", "check", "check_endpoint", "check_public", "flag", "problems", "public_problems", "push",
           "redact_url", "task_for"]
